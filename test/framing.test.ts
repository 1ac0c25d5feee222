import fs from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ServerProcess } from './support/server-process.js';

const servers: ServerProcess[] = [];
const open = async (args: string[] = []) => {
  const server = new ServerProcess(args);
  servers.push(server);
  return server;
};
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.dispose()));
});

const nullIdError = (server: ServerProcess, index: number) =>
  server.waitFor((m) => m.id === null && server.messages.filter((x) => x.id === null).indexOf(m) === index);

describe('framing (EXT-PARSE)', () => {
  it('answers malformed JSON with -32700 and id null, then keeps serving', async () => {
    const server = await open();
    server.sendLine('{"id":1,"method":');
    const error = await nullIdError(server, 0);
    expect(server.rawLines[0]).toMatch(/^\{"id":null,"error":\{"code":-32700,"message":"Parse error: /);
    expect(error.error.code).toBe(-32700);
    const response = await server.call('initialize', { clientName: 'x' }, 2);
    expect(response.result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers every request of a burst that reuses ids, each id in order, as the reference does', async () => {
    const server = await open();
    await server.call('initialize', { clientName: 'x' }, 0);
    server.notify('initialized');
    // vscode-jsonrpc queues requests by id (1 and "1" alike): a repeat would have replaced the one waiting.
    const burst = Array.from({ length: 60 }, (_, i) => ({
      id: i % 3 === 0 ? 'x' : i % 3 === 1 ? 1 : '1',
      method: 'fs/getMetadata',
      params: { path: i % 2 ? '/tmp' : '/' },
    }));
    server.sendLine(burst.map((request) => JSON.stringify(request)).join('\n'));
    await vi.waitFor(() => expect(server.messages.filter((m) => m.id !== 0 && 'result' in m)).toHaveLength(60), { timeout: 15_000 });
    const ids = server.messages.filter((m) => m.id !== 0).map((m) => m.id);
    for (const id of ['x', 1, '1']) expect(ids.filter((seen) => seen === id)).toHaveLength(20);
  });

  it('refuses a line whose sandbox comes twice, under any spelling, as the reference refuses it: nothing runs unconfined', async () => {
    const server = await open();
    await server.call('initialize', { clientName: 'x' }, 1);
    server.notify('initialized');
    const policy = JSON.stringify({ permissions: { type: 'managed' }, windowsSandboxLevel: 'disabled' });
    const target = `/tmp/exec-server-duplicate-${process.pid}`;
    const write = (id: number, second: string, data = '') =>
      `{"id":${id},"method":"fs/writeFile","params":{"path":"file://${target}","sandbox":${policy},${second}:null,"dataBase64":"${data}"}}`;
    server.sendLine(write(2, '"sandbox"'));
    server.sendLine(write(3, '"sandb\\u006fx"'));
    // A line large enough for the path that parses around its base64 (transport/large-line.ts).
    server.sendLine(write(5, '"sandbox"', Buffer.alloc(2 * 1024 * 1024).toString('base64')));
    for (const index of [0, 1, 2]) {
      expect((await nullIdError(server, index)).error).toEqual({
        code: -32700,
        message: 'Parse error: duplicate JSON object key `sandbox`',
      });
    }
    // Once is served.
    const response = await server.call('fs/getMetadata', { path: 'file:///tmp', sandbox: null }, 4);
    expect(response).toMatchObject({ result: { isDirectory: true } });
    const written = fs.existsSync(target);
    fs.rmSync(target, { force: true });
    expect(written).toBe(false);
  });

  it('answers invalid UTF-8 with -32700 and keeps serving', async () => {
    const server = await open();
    server.sendLine(Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]));
    const error = await nullIdError(server, 0);
    expect(error.error).toEqual({ code: -32700, message: 'Parse error: invalid UTF-8' });
    expect((await server.call('initialize', { clientName: 'x' }, 1)).result).toBeDefined();
  });

  it.each([
    ['{}', 'Invalid Request: missing "method"'],
    ['42', 'Invalid Request: expected a JSON object'],
    ['"s"', 'Invalid Request: expected a JSON object'],
    ['{"method":5,"id":1}', 'Invalid Request: "method" must be a string'],
    ['{"id":null,"method":"initialize","params":{"clientName":"x"}}', 'Invalid Request: "id" must be a string or a 64-bit integer'],
    ['{"id":1.5,"method":"initialize","params":{"clientName":"x"}}', 'Invalid Request: "id" must be a string or a 64-bit integer'],
    ['{"id":true,"method":"initialize"}', 'Invalid Request: "id" must be a string or a 64-bit integer'],
    ['[{"id":1,"method":"initialize","params":{"clientName":"x"}}]', 'Invalid Request: batch requests are not supported'],
    ['[]', 'Invalid Request: batch requests are not supported'],
  ])('answers %s with -32600 and id null', async (line, message) => {
    const server = await open();
    server.sendLine(line);
    const error = await nullIdError(server, 0);
    expect(error.error).toEqual({ code: -32600, message });
    // Nothing in a rejected line was executed: initialize is still available.
    expect((await server.call('initialize', { clientName: 'x' }, 'after')).result.sessionId).toBeTypeOf('string');
  });

  it('skips blank lines, accepts CRLF and leading whitespace, echoes ids exactly', async () => {
    const server = await open();
    server.sendLine('\n   \n\t\n');
    server.sendLine('  {"id":"","method":"initialize","params":{"clientName":""}}\r');
    expect((await server.waitFor((m) => m.id === '')).result.sessionId).toBeTypeOf('string');
    server.notify('initialized');
    for (const id of ['7', 0, -5, 9007199254740991]) {
      const response = await server.call('process/terminate', { processId: 'none' }, id);
      expect(response).toEqual({ id, result: { running: false } });
    }
    expect(server.messages.filter((m) => m.id === null)).toEqual([]);
  });

  it('writes compact lines without a jsonrpc member, id first', async () => {
    const server = await open();
    server.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { clientName: 'x' } });
    await server.waitFor((m) => m.id === 1);
    expect(server.rawLines[0]).toMatch(/^\{"id":1,"result":\{"sessionId":"[0-9a-f-]+","environmentInfo":\{"shell":.*\}\}\}$/);
    server.send({ id: 2, method: 'bogus' });
    await server.waitFor((m) => m.id === 2);
    expect(server.rawLines[1]).toBe('{"id":2,"error":{"code":-32601,"message":"exec-server stub does not implement `bogus` yet"}}');
  });

  it('ignores unknown notifications and client responses (EXT-NOTIFY)', async () => {
    const server = await open();
    server.notify('$/cancelRequest', { id: 1 });
    server.notify('exit');
    server.notify('process/start', {});
    server.send({ id: 99, result: {} });
    server.send({ id: 98, error: { code: 1, message: 'x' } });
    const response = await server.call('initialize', { clientName: 'x' }, 1);
    expect(response.result.sessionId).toBeTypeOf('string');
    expect(server.messages).toHaveLength(1);
  });

  it('discards a line longer than --max-line-bytes with an error, then serves the next', async () => {
    const limit = 64 * 1024 * 1024;
    const server = await open(['--max-line-bytes', String(limit)]);
    const big = `{"id":1,"method":"initialize","params":{"clientName":"${'a'.repeat(limit)}"}}`;
    server.sendLine(big);
    const error = await nullIdError(server, 0);
    expect(error.error).toEqual({ code: -32600, message: `Invalid Request: message exceeds ${limit} bytes` });
    expect((await server.call('initialize', { clientName: 'x' }, 2)).result.sessionId).toBeTypeOf('string');
  });

  it('answers a final line without a newline before exiting at EOF', async () => {
    const server = await open();
    server.child.stdin.end('{"id":1,"method":"initialize","params":{"clientName":"x"}}');
    const { code } = await server.exited;
    expect(code).toBe(0);
    expect(server.messages[0]?.result?.sessionId).toBeTypeOf('string');
  });
});

describe('unknown methods and params errors', () => {
  it('answers unknown methods with -32601 in every state, matching names exactly', async () => {
    const server = await open();
    for (const name of ['Process/Start', 'process/start ', '', 'initialized', 'process/output', 'shutdown']) {
      expect(await server.error(name, {})).toEqual({
        code: -32601,
        message: `exec-server stub does not implement \`${name}\` yet`,
      });
    }
  });

  it('decodes params before the gate, naming the offending field', async () => {
    const server = await open();
    expect(await server.error('process/start', undefined)).toEqual({
      code: -32602,
      message: 'invalid type: null, expected struct ExecParams',
    });
    expect((await server.error('process/start', { argv: [] })).message).toBe('missing field `processId`');
    expect((await server.error('process/write', { processId: 'a', chunk: 5 })).message).toBe(
      'chunk: invalid type: integer `5`, expected a string',
    );
    expect((await server.error('process/read', { processId: 'a', afterSeq: -1 })).message).toBe(
      'afterSeq: invalid value: integer `-1`, expected u64',
    );
    expect((await server.error('process/read', { processId: 'a', waitMs: 1.5 })).message).toBe(
      'waitMs: invalid type: floating point `1.5`, expected u64',
    );
    expect((await server.error('process/read', { processId: 'a', maxBytes: '10' })).message).toBe(
      'maxBytes: invalid type: string "10", expected usize',
    );
    expect((await server.error('process/start', { processId: 'a', argv: 'true', cwd: '/', env: {}, tty: false })).message).toBe(
      'argv: invalid type: string "true", expected a sequence',
    );
    expect((await server.error('process/start', { processId: 'a', argv: ['x'], cwd: '/', env: {}, tty: 'yes' })).message).toBe(
      'tty: invalid type: string "yes", expected a boolean',
    );
    expect(
      (await server.error('process/start', { processId: 'a', argv: ['x'], cwd: '/', env: {}, tty: false, pipeStdin: null })).message,
    ).toBe('pipeStdin: invalid type: null, expected a boolean');
    expect((await server.error('initialize', [1, 2])).message).toBe('invalid type: sequence, expected struct InitializeParams');
  });
});
