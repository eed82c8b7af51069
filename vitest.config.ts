import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// The programs the tests spawn keep their compile cache (bin/compile-cache.cjs) in a folder of the test runs,
// not in the user's own cache folder. One folder for every run: it holds at most three builds' caches.
process.env.XDG_CACHE_HOME ??= join(tmpdir(), `provider-test-cache-${process.getuid?.() ?? 'user'}`);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
