import { defineConfig } from 'vitest/config';

/**
 * The program service's tests again, each service on its own PostgreSQL
 * database (test/fixtures/programs-postgres-setup.ts starts the server,
 * test/fixtures/programs.ts makes the databases); run by `npm run test:peers`.
 * Every directory of a program-service plugin runs here whole; the files
 * left out are about SQLite itself or already run on PostgreSQL in the peer
 * suite, as docs/databases.md, "Tests on PostgreSQL", says.
 */
export default defineConfig({
  test: {
    include: [
      'test/plugins/{accounts,assignments,audit-api,console,dashboard,deployments,gateways,mirror,programs-service,vault,webhooks}/**/*.test.ts',
      // The /api/v1 surface itself, on a service with a test-only plugin.
      'test/core/rest/surface.test.ts',
      // Programs as bytes from the vault to each program-capable driver and back.
      'test/drivers/program-bytes.test.ts',
    ],
    exclude: [
      '**/node_modules/**',
      // The choice of engine itself, and SQLite's own files.
      'test/plugins/programs-service/database.test.ts',
      // The stores' cases on SQLite; their PostgreSQL run is test/peers/*-store-postgres.test.ts and
      // test/peers/deployments-instances-postgres.test.ts.
      'test/plugins/{deployments,mirror,webhooks}/store.test.ts',
      'test/plugins/deployments/instances.test.ts',
    ],
    globalSetup: ['test/fixtures/programs-postgres-setup.ts'],
    setupFiles: ['test/fixtures/check-outputs.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
