/** The secret keys (administrators only): /api/security/secret-keys, /api/security/secret-key/{create,revoke}. */
import { SECURITY } from '../../../core/roles/gateway/contract/security.js';
import { createSecretKey } from '../tokens.js';
import type { AuthDeps } from './deps.js';

/** Listing, creating and revoking secret keys; a key's secret is shown once, at its creation. */
export function defineKeyInterfaces(deps: AuthDeps): void {
  const { ctx, users } = deps;
  const implement = ctx.interfaces.implement.bind(ctx.interfaces);

  implement(SECURITY.secretKeys, {
    handler: () =>
      users.listKeys().map((k) => ({ id: k.id, username: k.username, label: k.label, createdAt: k.createdAt, revokedAt: k.revokedAt, lastUsedAt: k.lastUsedAt })),
  });

  implement(SECURITY.createSecretKey, {
    handler: async (input) => {
      const owner = users.getUser(input.username);
      const created = createSecretKey();
      await users.addKey({ id: created.id, accountId: owner.accountId, username: input.username, keyHash: created.hash, label: input.label, createdAt: ctx.now(), revokedAt: null, lastUsedAt: null });
      return { id: created.id, username: input.username, label: input.label, key: created.key };
    },
  });

  implement(SECURITY.revokeSecretKey, {
    handler: async (input) => {
      const key = await users.revokeKey(input.id, ctx.now());
      return { id: key.id, revokedAt: key.revokedAt };
    },
  });
}
