/**
 * A PTY's exit is reported however the client reads: after the leader exits
 * the server drains the terminal (by a marker, or by silence when the marker
 * cannot be written), and a client that stopped reading meanwhile only
 * delays that drain, it does not cancel it (§3.3: one `exited` per process).
 * A job left holding the terminal keeps the process open after its exit.
 */
import { describe, expect, it } from 'vitest';
import { findByCmdline, waitDead } from './support/proc.js';
import { BASE_ENV, ServerProcess } from './support/server-process.js';

describe('a PTY whose leader exits while the client reads nothing', () => {
  it.each([
    ['reads again', false],
    ['then only reads slowly (about 200 KiB/s)', true],
  ])(
    'still gets its exit once the client %s, with a job flooding the terminal',
    async (_how, slowly) => {
      const server = await ServerProcess.started();
      server.keepOutput = false;
      try {
        // The job keeps the terminal full, so the server cannot write its drain marker at the exit.
        const script = 'set -m; yes pty-drain-job > /dev/tty & sleep 0.5; exit 3 # pty-drain-leader';
        server.child.stdout.pause();
        server.send({
          id: 'start',
          method: 'process/start',
          params: { processId: 'flood', argv: ['bash', '-c', script], cwd: '/tmp', env: BASE_ENV, tty: true },
        });
        let leaders: number[] = [];
        while (leaders.length === 0) {
          leaders = findByCmdline('pty-drain-leader', 'bash');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(await waitDead(leaders, 10_000)).toEqual([]);
        if (slowly) {
          // About 200 KiB/s however the pipe cuts it: a fixed pause per chunk made a loaded machine's
          // smaller chunks a slower client.
          server.child.stdout.on('data', (chunk: Buffer) => {
            server.child.stdout.pause();
            setTimeout(() => server.child.stdout.resume(), chunk.length / 200);
          });
        }
        server.child.stdout.resume();
        const exited = await server.waitFor((m) => m.method === 'process/exited' && m.params.processId === 'flood', 15_000);
        expect(exited.params.exitCode).toBe(3);
        // The job still holds the terminal, so the process stays open (its output goes on, as in
        // the reference) until the job is gone.
        const jobs = findByCmdline('pty-drain-job', 'yes');
        expect(jobs).toHaveLength(1);
        process.kill(jobs[0]!, 'SIGKILL');
        await server.waitClosed('flood', 15_000);
      } finally {
        await server.dispose();
      }
    },
    40_000,
  );
});
