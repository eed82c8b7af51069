import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One test file more than there are cores (vitest's default leaves one core free): most files wait on the
    // processes and servers they start. On 2 cores the suite took 400 s with vitest's default, 296 s with one
    // file per core and 261 s with one more (user + system time alike, 455 s: the cores were idle, not short).
    maxWorkers: availableParallelism() + 1,
  },
});
