/**
 * A server out of file descriptors (`ulimit -n 64`) refuses the starts it
 * cannot make with the reference's −32603 and serves on: it neither crashes
 * nor leaves a request unanswered, pipe, pipe-stdin and PTY starts alike.
 */
import { describe, expect, it } from 'vitest';
import { CLI, ServerProcess } from './support/server-process.js';

describe('a server out of descriptors', () => {
  it('answers every start, pipes, pipes with stdin and PTYs mixed, refusing those it cannot make, and serves on', async () => {
    const server = await ServerProcess.started([], process.env, undefined, [
      'sh',
      ['-c', `ulimit -n 64; exec "${process.execPath}" ${CLI}`],
    ]);
    try {
      const starts = Array.from({ length: 80 }, (_, i) =>
        server.call('process/start', {
          processId: `p${i}`,
          argv: ['sleep', '30'],
          cwd: '/tmp',
          env: { PATH: '/usr/bin:/bin' },
          tty: i % 5 === 4,
          pipeStdin: i % 2 === 0,
        }),
      );
      const answers = await Promise.all(starts);
      const refused = answers.filter((answer) => answer.error);
      expect(answers.filter((answer) => answer.result)).not.toHaveLength(0);
      expect(refused).not.toHaveLength(0);
      for (const { error } of refused) {
        expect(error).toEqual({
          code: -32603,
          message: expect.stringMatching(/^(No file descriptors available \(os error 24\)|forkpty\(3\) failed\.)$/),
        });
      }
      for (const [i, answer] of answers.entries()) if (answer.result) await server.request('process/terminate', { processId: `p${i}` });
      expect((await server.call('fs/getMetadata', { path: '/' })).result.isDirectory).toBe(true);
      expect(server.child.exitCode).toBeNull();
      expect(server.stderr).not.toMatch(/Unhandled|TypeError/);
    } finally {
      await server.dispose();
    }
  }, 30_000);
});
