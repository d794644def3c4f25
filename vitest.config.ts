import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Most of an integration test's time is spent waiting (child processes, sockets, a browser):
    // vitest's default of one worker less than the cores ran one file at a time on 2 cores.
    maxWorkers: Math.max(availableParallelism() - 1, 3),
  },
});
