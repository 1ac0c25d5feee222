import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// In CI, also write machine-readable results: .ci/run prints "N passed, N failed" from them.
const ci = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

/**
 * The longest files first (a fresh clone has no timings for vitest to go by): the interop file,
 * the longest, started last made the tail of the run. The heavy
 * ones (below) come first among them: a worker of the shared project ends when the next file in
 * the queue is of the other project, so alternating them started a shared worker again and again.
 */
const LONGEST = ['interop', 'backpressure', 'client-large-answers', 'websocket', 'fs', 'command-sessions', 'fidelity', 'shutdown', 'fuzz'];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = LONGEST.findIndex((name) => file.moduleId.endsWith(`/test/${name}.test.ts`));
      return index < 0 ? LONGEST.length : index;
    };
    return [...(await super.sort(files))].sort((a, b) => rank(a) - rank(b));
  }
}

/**
 * Files that leave their worker hundreds of MiB larger (large answers, floods read whole): freed
 * memory stays with the process (glibc does not give a fragmented heap back), and every later spawn
 * in that worker copies its page tables, which costs CPU in proportion to its size. Each runs in a
 * process of its own, which ends with it.
 */
const HEAVY = ['client-large-answers', 'backpressure', 'fs', 'interop', 'websocket'].map((name) => `test/${name}.test.ts`);

export default defineConfig({
  test: {
    projects: [
      { extends: true, test: { name: 'heavy', include: HEAVY, isolate: true } },
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...HEAVY] } },
    ],
    pool: 'forks',
    maxWorkers: 2,
    // Files share their worker process instead of starting one each (a Node start and the imports,
    // for every file): a test that changes process-wide state (env, timers, umask) restores it.
    isolate: false,
    sequence: { sequencer: LongestFirst },
    // Kills the process groups tests left behind, and removes their scratch directories (test/support/leftovers.ts).
    globalSetup: ['test/support/leftovers.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ci ? ['default', 'json'] : ['default'],
    outputFile: ci ? { json: '.ci/results.json' } : undefined,
  },
});
