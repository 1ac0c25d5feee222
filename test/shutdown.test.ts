import { execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { closeLoopback, listenLoopback } from './support/loopback.js';
import { findByCmdline, waitDead, waitFound } from './support/proc.js';
import { BASE_ENV, CLI, ServerProcess } from './support/server-process.js';

const servers: ServerProcess[] = [];
const started = async () => {
  const server = await ServerProcess.started();
  servers.push(server);
  return server;
};
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.dispose()));
});

const startLine = (id: number, processId: string, argv: string[], tty = false) =>
  JSON.stringify({ id, method: 'process/start', params: { processId, argv, cwd: '/tmp', env: BASE_ENV, tty } });

describe('end of input (EXT-DRAIN)', () => {
  it('answers every request of a shell pipe, flushes exited/closed, kills the rest, exits 0', async () => {
    const lines = [
      '{"id":1,"method":"initialize","params":{"clientName":"sh"}}',
      '{"method":"initialized"}',
      startLine(2, 'p', ['sh', '-c', 'echo hello; exec sleep 30.201']),
      '{"id":3,"method":"process/read","params":{"processId":"p","waitMs":5000}}',
    ];
    const script = `printf '%s\\n' ${lines.map((l) => `'${l}'`).join(' ')} | ${process.execPath} ${CLI}`;
    const { stdout } = await promisify(execFile)('/bin/sh', ['-c', script]);
    const messages = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const read = messages.find((m) => m.id === 3);
    expect(Buffer.from(read.result.chunks[0].chunk, 'base64').toString()).toBe('hello\n');
    const events = messages.filter((m) => m.params?.processId === 'p').map((m) => m.method);
    expect(events.slice(-2)).toEqual(['process/exited', 'process/closed']);
    expect(messages.find((m) => m.method === 'process/exited').params.exitCode).toBe(-1);
    expect(findByCmdline('30.201')).toEqual([]);
  });

  it('lets a pending long-poll finish by its own rules before exiting', async () => {
    const server = await started();
    await server.start('slow', ['sh', '-c', 'sleep 0.3; echo late; sleep 30.202']);
    const poll = server.call('process/read', { processId: 'slow', waitMs: 10_000 });
    const { code } = await server.close();
    expect(code).toBe(0);
    const response = await poll;
    expect(Buffer.from(response.result.chunks[0].chunk, 'base64').toString()).toBe('late\n');
    expect(server.messages.at(-1)).toMatchObject({ method: 'process/closed', params: { processId: 'slow' } });
    expect(findByCmdline('30.202')).toEqual([]);
  });

  it('closes a pipe held open by an escaped descendant 2 s after exit', async () => {
    const server = await started();
    await server.start('held', ['sh', '-c', 'setsid sleep 30.203 & exec sleep 30.204']);
    const started_ = Date.now();
    const { code } = await server.close();
    expect(code).toBe(0);
    expect(Date.now() - started_).toBeLessThan(5000);
    expect(server.messages.at(-1)).toMatchObject({ method: 'process/closed', params: { processId: 'held' } });
    for (const pid of findByCmdline('30.203')) process.kill(pid, 'SIGKILL');
  });
});

describe('signals (EXT-SIGNALS)', () => {
  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)('on %s answers long-polls at once, drains and exits 0', async (signal) => {
    const server = await started();
    await server.start('s', ['sleep', '30.21']);
    await server.start('t', ['sleep', '30.22'], { tty: true });
    const poll = server.call('process/read', { processId: 's', waitMs: 60_000 });
    await server.request('environment/info'); // the poll is registered before the signal
    const sentAt = Date.now();
    server.child.kill(signal);
    const response = await poll;
    expect(Date.now() - sentAt).toBeLessThan(2000);
    expect(response.result).toMatchObject({ chunks: [], exited: false });
    const { code } = await server.exited;
    expect(code).toBe(0);
    for (const processId of ['s', 't']) {
      expect(server.notifications(processId).map((m) => m.method)).toEqual(['process/exited', 'process/closed']);
    }
    expect(findByCmdline('30.21')).toEqual([]);
    expect(findByCmdline('30.22')).toEqual([]);
  });
});

describe('a signal ends the server even when a request is never answered', () => {
  it('gives up an HTTP request without a timeout 5 s after SIGTERM, kills the processes and exits 0', async () => {
    // A web server that takes requests and never answers them.
    const silent = http.createServer(() => undefined);
    const base = await listenLoopback(silent);
    try {
      const server = await started();
      await server.start('s', ['sleep', '30.25']);
      const hanging = server.call('http/request', { method: 'GET', url: `${base}/never`, requestId: 'h' });
      await server.request('environment/info');
      const sentAt = Date.now();
      server.child.kill('SIGTERM');
      const { code } = await server.exited;
      const took = Date.now() - sentAt;
      expect(code).toBe(0);
      expect(took).toBeGreaterThanOrEqual(4500);
      expect(took).toBeLessThan(9000);
      expect(server.notifications('s').map((m) => m.method)).toEqual(['process/exited', 'process/closed']);
      expect(findByCmdline('30.25')).toEqual([]);
      // Aborted, the request still got its one answer before the server ended.
      expect((await hanging).error).toMatchObject({ code: -32603 });
    } finally {
      await closeLoopback(silent);
    }
  });
});

describe('a signal ends the server even when the client reads nothing', () => {
  it('exits 5 s after SIGTERM with its output pipe full, the flooding child killed', async () => {
    const server = await started();
    await server.start('flood', ['sh', '-c', 'yes stalled-client-flood']);
    server.child.stdout.pause(); // from here the pipe fills, and the server's writes wait
    expect(await waitFound('stalled-client-flood', 'yes')).not.toHaveLength(0);
    const sentAt = Date.now();
    server.child.kill('SIGTERM');
    const { code } = await server.exited;
    expect(code).toBe(0);
    expect(Date.now() - sentAt).toBeLessThan(9000);
    expect(await waitDead(findByCmdline('stalled-client-flood', 'yes'))).toEqual([]);
  }, 20_000);
});

describe('process trees die with their process', () => {
  it('terminate kills the whole group, grandchildren included', async () => {
    const server = await started();
    await server.start('tree', ['bash', '-c', 'sleep 30.231 & sleep 30.232 & echo started; wait']);
    await server.waitFor((m) => m.method === 'process/output' && m.params.processId === 'tree');
    const pids = [...(await waitFound('30.231', 'sleep')), ...(await waitFound('30.232', 'sleep'))];
    expect(pids).toHaveLength(2);
    expect(await server.request('process/terminate', { processId: 'tree' })).toEqual({ running: true });
    await server.waitClosed('tree');
    expect(await waitDead(pids)).toEqual([]);
  });

  it('children do not outlive a SIGKILLed server (guardian)', async () => {
    const server = await started();
    await server.start('a', ['bash', '-c', 'sleep 30.241 & wait']);
    await server.start('b', ['sleep', '30.242'], { tty: true });
    // Started while a PTY is open, so through the spawner (which dies with the server too).
    await server.start('c', ['bash', '-c', 'sleep 30.243 & wait']);
    await server.request('environment/info');
    const pids = [
      ...(await waitFound('30.241', 'sleep')),
      ...(await waitFound('30.242', 'sleep')),
      ...(await waitFound('30.243', 'sleep')),
    ];
    expect(pids).toHaveLength(3);
    server.child.kill('SIGKILL');
    await server.exited;
    expect(await waitDead(pids)).toEqual([]);
  });

  it('kills everything and exits when the client closes stdout', async () => {
    const server = await started();
    await server.start('c', ['sh', '-c', 'while :; do echo tick; sleep 0.01; done; # 30.25']);
    await server.waitFor((m) => m.method === 'process/output');
    server.child.stdout.destroy();
    const { code } = await server.exited;
    expect(code).toBe(0);
    expect(await waitDead(findByCmdline('30.25'))).toEqual([]);
  });
});
