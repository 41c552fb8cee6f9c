import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/peers/**', 'node_modules/**'],
    // Interfaces' answers are checked against their output schemas (core/interfaces/registry.ts).
    setupFiles: ['test/fixtures/check-outputs.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
  },
});
