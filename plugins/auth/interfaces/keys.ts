/** The secret keys (administrators only): /api/security/secret-keys, /api/security/secret-key/{create,revoke}. */
import { z } from 'zod';
import { createSecretKey } from '../tokens.js';
import type { AuthDeps } from './deps.js';
import { username } from './fields.js';

/** Listing, creating and revoking secret keys; a key's secret is shown once, at its creation. */
export function defineKeyInterfaces(deps: AuthDeps): void {
  const { ctx, users } = deps;
  const define = ctx.interfaces.define.bind(ctx.interfaces);

  define({
    path: '/api/security/secret-keys',
    method: 'GET',
    summary: 'Every secret key, without its secret (administrators only).',
    tags: ['security'],
    input: z.object({}).strict(),
    handler: () =>
      users.listKeys().map((k) => ({ id: k.id, username: k.username, label: k.label, createdAt: k.createdAt, revokedAt: k.revokedAt, lastUsedAt: k.lastUsedAt })),
  });

  define({
    path: '/api/security/secret-key/create',
    method: 'POST',
    summary: 'Creates a secret key for a user (administrators only). The key is shown in this response only; it is valid until revoked.',
    tags: ['security'],
    input: z.object({ username, label: z.string().max(128).default('') }).strict(),
    handler: async (input) => {
      const owner = users.getUser(input.username);
      const created = createSecretKey();
      await users.addKey({ id: created.id, accountId: owner.accountId, username: input.username, keyHash: created.hash, label: input.label, createdAt: ctx.now(), revokedAt: null, lastUsedAt: null });
      return { id: created.id, username: input.username, label: input.label, key: created.key };
    },
  });

  define({
    path: '/api/security/secret-key/revoke',
    method: 'POST',
    summary: 'Revokes a secret key (administrators only); it stops working at once.',
    tags: ['security'],
    input: z.object({ id: z.string().min(1) }).strict(),
    handler: async (input) => {
      const key = await users.revokeKey(input.id, ctx.now());
      return { id: key.id, revokedAt: key.revokedAt };
    },
  });
}
