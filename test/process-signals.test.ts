/** process/terminate, process/signal and process/resize on pipe children, started either way. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerProcess } from './support/server-process.js';

let server: ServerProcess;

describe.each(['never', 'always'] as const)('pipe children started with EXEC_SERVER_SPAWNER=%s', (mode) => {
  beforeAll(async () => {
    server = await ServerProcess.started([], { ...process.env, EXEC_SERVER_SPAWNER: mode });
  });
  afterAll(async () => {
    await server.dispose();
  });

  let counter = 0;
  const id = () => `s${++counter}`;
  const run = (argv: string[]) => server.runToClose(id(), argv);

  describe('process/terminate and process/signal', () => {
    it('reports running:false for unknown and exited processes', async () => {
      expect(await server.request('process/terminate', { processId: 'nobody' })).toEqual({ running: false });
      const { processId } = await run(['true']);
      expect(await server.request('process/terminate', { processId })).toEqual({ running: false });
    });

    it('sends named signals to the process group', async () => {
      const processId = id();
      await server.start(processId, ['sh', '-c', 'trap "echo got-usr1; exit 3" USR1; echo ready; while :; do sleep 0.01; done']);
      await server.waitFor((m) => m.method === 'process/output' && m.params.processId === processId);
      expect(await server.request('process/signal', { processId, signal: 'SIGUSR1' })).toEqual({});
      await server.waitClosed(processId);
      expect(server.output(processId).toString()).toContain('got-usr1');
      expect(await server.request('process/signal', { processId, signal: 'SIGTERM' })).toEqual({});
      expect(await server.error('process/signal', { processId, signal: 'sigterm' })).toEqual({
        code: -32602,
        message: 'unsupported signal `sigterm`',
      });
      expect(await server.error('process/signal', { processId: 'nobody', signal: 'SIGINT' })).toEqual({
        code: -32600,
        message: 'unknown process id nobody',
      });
    });

    it('rejects resize for pipe processes and bad sizes', async () => {
      const processId = id();
      await server.start(processId, ['sleep', '5']);
      expect(await server.error('process/resize', { processId, rows: 10, cols: 10 })).toEqual({
        code: -32600,
        message: `process ${processId} is not a tty`,
      });
      expect(await server.error('process/resize', { processId, rows: 0, cols: 10 })).toEqual({
        code: -32602,
        message: 'rows and cols must be integers between 1 and 65535',
      });
      expect((await server.error('process/resize', { processId, rows: 10 })).message).toBe('missing field `cols`');
      await server.request('process/terminate', { processId });
      await server.waitClosed(processId);
    });
  });
});
