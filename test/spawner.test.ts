/** The perl spawner (src/server/process/spawner.ts) under load and when it dies. */
import { describe, expect, it } from 'vitest';
import { findByCmdline, waitDead } from './support/proc.js';
import { ServerProcess } from './support/server-process.js';

describe('the spawner', () => {
  it('starts many processes at once, each with its own output and exit code', async () => {
    const server = await ServerProcess.started([], { ...process.env, EXEC_SERVER_SPAWNER: 'always' });
    try {
      const ids = Array.from({ length: 50 }, (_, i) => `many${i}`);
      await Promise.all(ids.map((id, i) => server.start(id, ['sh', '-c', `echo ${id}; exit ${i % 7}`])));
      await Promise.all(ids.map((id) => server.waitClosed(id)));
      for (const [i, id] of ids.entries()) {
        expect(server.output(id).toString()).toBe(`${id}\n`);
        const exited = server.notifications(id).find((m) => m.method === 'process/exited')!;
        expect(exited.params.exitCode).toBe(i % 7);
      }
    } finally {
      await server.dispose();
    }
  });

  it('if it is killed, its children are killed and reported, and later starts fall back to Node', async () => {
    const server = await ServerProcess.started([], { ...process.env, EXEC_SERVER_SPAWNER: 'always' });
    try {
      await server.start('victim', ['sh', '-c', 'echo $PPID; exec sleep 30.71']);
      await server.waitFor((m) => m.method === 'process/output' && m.params.processId === 'victim');
      const spawner = Number(server.output('victim').toString());
      const sleeper = findByCmdline('30.71', 'sleep');
      process.kill(spawner, 'SIGKILL');
      await server.waitClosed('victim');
      const exited = server.notifications('victim').find((m) => m.method === 'process/exited')!;
      expect(exited.params.exitCode).toBe(-1);
      expect(await waitDead(sleeper)).toEqual([]);
      await server.start('after', ['sh', '-c', 'echo $PPID']);
      await server.waitClosed('after');
      expect(Number(server.output('after').toString())).toBe(server.child.pid);
    } finally {
      await server.dispose();
    }
  });
});
