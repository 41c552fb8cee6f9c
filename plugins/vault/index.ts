/**
 * The program vault: libraries with their approval policy, programs, and
 * immutable, byte-exact versions that go draft → submitted → published →
 * obsolete; approvals with separation of duties; the NC-aware diff
 * (plugins/vault/nc). docs/programs-vault.md.
 */
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import { vaultOperations } from './operations/index.js';
import { vaultVersions } from './service.js';
import { MIGRATIONS, VaultStore } from './store.js';
import { registerVaultMetrics } from './metrics.js';

export const vaultPlugin = definePlugin<ProgramsContext>({
  name: 'vault',
  migrations: MIGRATIONS,
  register(ctx) {
    const store = new VaultStore(ctx.db);
    registerVaultMetrics(ctx.metrics, ctx.db);
    for (const op of vaultOperations(ctx, store)) ctx.rest.define(op);
    ctx.services.provide('vault.versions', vaultVersions(store));
  },
});
