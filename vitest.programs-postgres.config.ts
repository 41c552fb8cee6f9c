import { defineConfig } from 'vitest/config';

/**
 * The program service's tests again, each service on its own PostgreSQL
 * database (test/fixtures/programs-postgres-setup.ts starts the server,
 * test/fixtures/programs.ts makes the databases); run by `npm run test:peers`.
 * The files listed pass on PostgreSQL; docs/databases.md, "Tests on
 * PostgreSQL", names those that do not yet and why.
 */
export default defineConfig({
  test: {
    include: [
      'test/plugins/vault/nc/{block-diff,canonical-oracle,diff-programs,program-facts,unified-vs-diff}.test.ts',
      'test/plugins/vault/separation-of-duties.test.ts',
      'test/plugins/accounts/*.test.ts',
      'test/plugins/vault/vault.test.ts',
      'test/plugins/assignments/*.test.ts',
      'test/plugins/audit-api/audit-api.test.ts',
      'test/plugins/programs-service/context.test.ts',
      'test/plugins/programs-service/document.test.ts',
      'test/plugins/webhooks/targets.test.ts',
      'test/plugins/console/serve.test.ts',
      'test/plugins/dashboard/*.test.ts',
      'test/plugins/programs-service/generated-client.test.ts',
      'test/plugins/deployments/{remote,sigkill,slots}.test.ts',
      'test/plugins/webhooks/{webhooks,scopes}.test.ts',
      'test/plugins/gateways/demo-fleet.test.ts',
    ],
    globalSetup: ['test/fixtures/programs-postgres-setup.ts'],
    setupFiles: ['test/fixtures/check-outputs.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
