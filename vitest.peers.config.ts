import { defineConfig } from 'vitest/config';

/** Tests against peers installed from Debian packages (e.g. Mosquitto); `.ci/run` installs them first. */
export default defineConfig({
  test: {
    include: ['test/peers/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
