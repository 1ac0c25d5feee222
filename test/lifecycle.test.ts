import { afterEach, describe, expect, it } from 'vitest';
import { ServerProcess } from './support/server-process.js';

const servers: ServerProcess[] = [];
const open = () => {
  const server = new ServerProcess();
  servers.push(server);
  return server;
};
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.dispose()));
});

const gated: Array<[string, unknown, string]> = [
  ['process/start', { processId: 'p', argv: ['true'], cwd: '/', env: {}, tty: false }, 'exec'],
  ['process/read', { processId: 'p' }, 'exec'],
  ['process/write', { processId: 'p', chunk: '' }, 'exec'],
  ['process/terminate', { processId: 'p' }, 'exec'],
  ['process/resize', { processId: 'p', rows: 1, cols: 1 }, 'exec'],
  ['process/signal', { processId: 'p', signal: 'SIGINT' }, 'exec'],
  ['environment/info', {}, 'environment'],
];

describe('handshake (§2)', () => {
  it('returns a UUID v4 session id', async () => {
    const server = open();
    const result = await server.request('initialize', { clientName: 'test' });
    expect(result.sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Generation 2's environment (PROTOCOL-V2.md §1c): generation 1 clients ignore the member.
    expect(result.environmentInfo).toMatchObject({
      cwd: `file://${process.cwd()}`,
      platformOs: 'linux',
      executorVersion: expect.any(String),
    });
  });

  it.each(gated)('gates %s before initialize and before initialized', async (method, params, family) => {
    const server = open();
    expect(await server.error(method, params)).toEqual({
      code: -32600,
      message: `client must call initialize before using ${family} methods`,
    });
    await server.request('initialize', { clientName: 'test' });
    expect(await server.error(method, params)).toEqual({
      code: -32600,
      message: `client must send initialized before using ${family} methods`,
    });
  });

  it('ignores initialized before initialize (EXT-NOTIFY); the gate stays shut', async () => {
    const server = open();
    server.notify('initialized');
    await server.request('initialize', { clientName: 'test' });
    expect((await server.error('process/read', { processId: 'p' })).message).toBe('client must send initialized before using exec methods');
    server.notify('initialized', 5);
    expect(await server.error('process/read', { processId: 'p' })).toEqual({ code: -32600, message: 'unknown process id p' });
  });

  it('allows initialize only once per connection', async () => {
    const server = open();
    await server.request('initialize', { clientName: 'test' });
    expect(await server.error('initialize', { clientName: 'test' })).toEqual({
      code: -32600,
      message: 'initialize may only be sent once per connection',
    });
    server.notify('initialized');
    expect(await server.error('initialize', { clientName: 'again' })).toEqual({
      code: -32600,
      message: 'initialize may only be sent once per connection',
    });
  });

  it('rejects an unknown resume session without using up initialize', async () => {
    const server = open();
    expect(await server.error('initialize', { clientName: 't', resumeSessionId: 'abc' })).toEqual({
      code: -32600,
      message: 'unknown session id abc',
    });
    expect((await server.error('initialize', { clientName: 't', resumeSessionId: '' })).message).toBe('unknown session id ');
    expect((await server.request('initialize', { clientName: 't', resumeSessionId: null })).sessionId).toBeTypeOf('string');
  });

  it('lets clients pipeline initialize, initialized and requests', async () => {
    const server = open();
    server.send({ id: 1, method: 'initialize', params: { clientName: 't' } });
    server.notify('initialized');
    const info = await server.request('environment/info');
    expect(info).toMatchObject({ platform: process.platform, arch: process.arch, pid: server.child.pid, cwd: process.cwd() });
    expect(info.shell.path).toMatch(/^\//);
    expect(info.shell.name).toBe(info.shell.path.split('/').pop());
  });
});
