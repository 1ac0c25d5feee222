import { afterEach, describe, expect, it } from 'vitest';
import { ServerProcess } from './support/server-process.js';

const servers: ServerProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.dispose()));
});

describe('retention after close (§3.1)', () => {
  it('keeps a closed process readable for --retention-ms, then forgets it', async () => {
    const server = await ServerProcess.started(['--retention-ms', '1500']);
    servers.push(server);
    await server.start('r', ['echo', 'kept']);
    const closedAt = Date.now();
    await server.waitClosed('r');
    expect((await server.request('process/read', { processId: 'r' })).closed).toBe(true);
    expect((await server.error('process/start', { processId: 'r', argv: ['true'], cwd: '/', env: {}, tty: false })).message).toBe(
      'process r already exists',
    );
    expect(await server.request('process/terminate', { processId: 'r' })).toEqual({ running: false });
    // Removal is the behaviour under test: poll until the entry is gone. The retention is roomy enough for
    // the three requests above to come before it ends on a loaded machine.
    let error: { code: number; message: string } | undefined;
    while (!error) {
      const response = await server.call('process/read', { processId: 'r' });
      error = response.error;
      if (!error) await new Promise((resolve) => setTimeout(resolve, 20)); // a poll, not a wait for an event
    }
    expect(Date.now() - closedAt).toBeGreaterThanOrEqual(1450);
    expect(error).toEqual({ code: -32600, message: 'unknown process id r' });
    expect(await server.request('process/write', { processId: 'r', chunk: '' })).toEqual({ status: 'unknownProcess' });
    await server.start('r', ['true']);
    await server.waitFor((m) => m.method === 'process/closed' && m.params.processId === 'r' && m.params.seq === 2);
  });

  it('rejects bad flags with a usage message and exit code 2', async () => {
    const server = new ServerProcess(['--retention-ms', 'soon']);
    servers.push(server);
    const { code } = await server.exited;
    expect(code).toBe(2);
    expect(server.stderr).toContain('--retention-ms: expected an integer from 0 to 2147483647, got "soon"');
  });
});
