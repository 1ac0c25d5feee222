/** CommandSessions over a remote executor whose server dies under them. */
import { describe, expect, it } from 'vitest';
import { CommandSessions, ExecServerClient, RemoteExecutor } from '../src/index.js';
import { childrenOf } from './support/proc.js';
import { CLI } from './support/server-process.js';

const ENV = { PATH: '/usr/local/bin:/usr/bin:/bin', PS1: '$ ', HOME: '/tmp' };

describe('CommandSessions when the transport goes', () => {
  it('fails an exec collecting when its server dies, rather than passing it off as an exit', async () => {
    const before = childrenOf(process.pid);
    const client = await ExecServerClient.spawn({ command: process.execPath, args: [CLI] });
    const [server] = childrenOf(process.pid).filter((pid) => !before.includes(pid));
    const executor = new RemoteExecutor(client);
    const sessions = new CommandSessions(executor, { env: ENV, cwd: '/tmp' });
    try {
      const opened = await sessions.exec({ input: ['sh', '-c', 'echo up; exec sleep 30'], timeoutMs: 0 });
      const idle = await sessions.exec({ input: ['sh', '-c', 'exec sleep 30'], timeoutMs: 0 });
      const collecting = sessions.exec({ sessionId: opened.sessionId!, input: [], timeoutMs: 20_000 });
      process.kill(server!, 'SIGKILL');
      await expect(collecting).rejects.toMatchObject({ kind: 'disconnected' });
      // One nobody was waiting on says so at its next call too (not: unknown session).
      await expect(sessions.exec({ sessionId: idle.sessionId!, input: [] })).rejects.toMatchObject({ kind: 'disconnected' });
    } finally {
      await sessions.close();
      await executor.close();
    }
  });
});
