import { defineConfig } from 'vitest/config';

// In CI, also write machine-readable results: .ci/run prints "N passed, N failed" from them.
const ci = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    // Files share their worker process instead of starting one each (a Node start and the imports,
    // for every file): a test that changes process-wide state (env, timers, umask) restores it.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ci ? ['default', 'json'] : ['default'],
    outputFile: ci ? { json: '.ci/results.json' } : undefined,
  },
});
