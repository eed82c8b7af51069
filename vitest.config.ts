import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One test file per core (vitest's default leaves one core free): most files wait on the processes and
    // servers they start, so on 2 cores the suite takes some 260 s this way instead of 400 s.
    maxWorkers: Math.max(2, availableParallelism()),
  },
});
