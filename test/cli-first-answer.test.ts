/**
 * The CLI answers a first-line `initialize` before it loads the server
 * (src/server/early-initialize.ts): that answer must be the server's own,
 * the server must take the request over as if it had answered it, and every
 * other first line must reach the server as it came.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, ServerProcess } from './support/server-process.js';

const EARLY = 'initialize answered before the server was loaded';
const DEBUG = ['--log-level', 'debug'];

const servers: ServerProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.dispose()));
});

function open(args = DEBUG): ServerProcess {
  const server = new ServerProcess(args);
  servers.push(server);
  return server;
}

/** Writes `chunks` as they are, ends the input, and waits for the server to drain and exit. */
async function exchange(chunks: Array<string | Buffer>) {
  const server = open();
  for (const chunk of chunks) server.child.stdin.write(chunk);
  const { code } = await server.close();
  return { code, lines: server.rawLines, answeredEarly: server.stderr.includes(EARLY) };
}

/** A line with what differs between two servers (session id, pid) blanked out. */
const normalized = (line: string) => line.replace(/"sessionId":"[0-9a-f-]{36}"/, '"sessionId":"S"').replace(/"pid":\d+/, '"pid":0');

/**
 * Whether `pid`'s main thread waits in its event loop (epoll_wait or epoll_pwait, by
 * /proc/<pid>/syscall): it gets there once the CLI's first part is reading stdin.
 */
function waitingInEventLoop(pid: number): boolean {
  const numbers = process.arch === 'arm64' ? '22' : '232|281';
  try {
    return new RegExp(`^(${numbers}) `).test(fs.readFileSync(`/proc/${pid}/syscall`, 'utf8'));
  } catch {
    return false;
  }
}

async function waitUntil(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const initialize = (params: unknown, id: unknown = 1) => `${JSON.stringify({ id, method: 'initialize', params })}\n`;

describe('the CLI answers a first-line initialize itself', () => {
  it.each([
    ['plain', initialize({ clientName: 'codex' })],
    ['with members it ignores, a null resume and a string id', initialize({ clientName: 'c', resumeSessionId: null, other: [1] }, 'a')],
    ['with jsonrpc and a CRLF ending', `{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"clientName":"x"}}\r\n`],
  ])('with the bytes the server writes for it (%s)', async (_name, line) => {
    const early = await exchange([line]);
    // After a blank first line, the server reads the same request itself.
    const late = await exchange(['\n', line]);
    expect(early).toMatchObject({ code: 0, answeredEarly: true });
    expect(late).toMatchObject({ code: 0, answeredEarly: false });
    expect(early.lines.map(normalized)).toEqual(late.lines.map(normalized));
    expect(early.lines).toHaveLength(1);
  });

  it.each([
    ['params the schema refuses', initialize({ clientName: 5 })],
    ['a resume', initialize({ clientName: 'c', resumeSessionId: 'not-a-session' })],
    ['a name outside ASCII', initialize({ clientName: 'café' })],
    ['a \\u escape', '{"id":1,"method":"initialize","params":{"clientName":"\\u0063"}}\n'],
    ['a line longer than the first read holds', initialize({ clientName: 'x'.repeat(70 * 1024) })],
    ['another method', '{"id":1,"method":"environment/status","params":null}\n'],
    ['a notification', '{"method":"initialize","params":{"clientName":"c"}}\n'],
    ['a null id', '{"id":null,"method":"initialize","params":{"clientName":"c"}}\n'],
    ['a batch', `[${initialize({ clientName: 'c' }).trim()}]\n`],
    ['no JSON', '{"id":1,"method":"initialize",\n'],
    ['a last line without its newline', initialize({ clientName: 'c' }).trim()],
  ])('and leaves the server to answer %s, as it always did', async (_name, line) => {
    const early = await exchange([line, initialize({ clientName: 'second' }, 2)]);
    const late = await exchange(['\n', line, initialize({ clientName: 'second' }, 2)]);
    expect(early.answeredEarly).toBe(false);
    expect(early.code).toBe(late.code);
    expect(early.lines.map(normalized)).toEqual(late.lines.map(normalized));
  });

  it('hands the session over: initialize once, the gate shut until initialized, then work', async () => {
    const server = open();
    const { sessionId } = await server.request('initialize', { clientName: 'c' });
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await server.error('initialize', { clientName: 'c' })).toEqual({
      code: -32600,
      message: 'initialize may only be sent once per connection',
    });
    expect((await server.error('process/read', { processId: 'p' })).message).toBe('client must send initialized before using exec methods');
    server.notify('initialized', {});
    const run = await server.runToClose('p', ['echo', 'ok']);
    expect(run).toMatchObject({ exitCode: 0, output: 'ok\n' });
    expect(server.stderr).toContain(EARLY);
  });

  it('keeps the generation the initialize showed (a file:// member makes it 2)', async () => {
    const cwdOf = async (params: object) => {
      const server = open();
      await server.request('initialize', params);
      server.notify('initialized', {});
      const info = await server.request('environment/info', {});
      expect(server.stderr).toContain(EARLY);
      return info.cwd as string;
    };
    expect(await cwdOf({ clientName: 'c', cwd: 'file:///tmp' })).toBe(`file://${process.cwd()}`);
    expect(await cwdOf({ clientName: 'c' })).toBe(process.cwd());
  });

  it('loses nothing when the first line comes in pieces with the next ones (random splits)', async () => {
    const start = { id: 3, method: 'process/start', params: { processId: 'p', argv: ['echo', 'x'], cwd: '/', env: {}, tty: false } };
    const input = Buffer.from(`${initialize({ clientName: 'split' })}{"method":"initialized"}\n${JSON.stringify(start)}\n`);
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 1, max: input.length - 1 }), { maxLength: 4 }), async (cuts) => {
        const points = [0, ...cuts.sort((a, b) => a - b), input.length];
        const server = open();
        for (let index = 1; index < points.length; index++) {
          server.child.stdin.write(input.subarray(points[index - 1], points[index]));
          // Pieces may reach the server apart: its first read may end inside the first line.
          await new Promise((resolve) => setImmediate(resolve));
        }
        const closed = await server.waitClosed('p');
        expect(closed.params.seq).toBe(3);
        expect(server.messages.filter((message) => 'id' in message).map((message) => message.id)).toEqual([1, 3]);
        expect(server.stderr).toContain(EARLY);
        expect((await server.close()).code).toBe(0);
      }),
      { numRuns: 6 },
    );
  });

  it('ends by a signal that comes while it waits for the first line, at once (nothing to drain)', async () => {
    const server = open();
    await waitUntil(() => waitingInEventLoop(server.child.pid!));
    // A handler here would hang the exit behind the pending read of stdin (src/cli/first-exchange.ts).
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('drains and exits 0 at a signal once the first answer is out (EXT-SIGNALS)', async () => {
    const server = open();
    await server.request('initialize', { clientName: 'c' });
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.stderr).toContain(EARLY);
  });

  it('ends at once when stdin ends without input', async () => {
    expect(await exchange([])).toEqual({ code: 0, lines: [], answeredEarly: false });
  });

  it('leaves the server to answer when the answer cannot be made (a deleted cwd), and goes on', async () => {
    const outcome = async (first: string) => {
      const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'first-answer-'));
      const server = new ServerProcess(DEBUG, process.env, undefined, undefined, cwd);
      servers.push(server);
      fs.rmdirSync(cwd);
      server.child.stdin.write(`${first}${initialize({ clientName: 'c' })}{"id":2,"method":"environment/status","params":null}\n`);
      const { code } = await server.close();
      return { code, lines: server.rawLines, answeredEarly: server.stderr.includes(EARLY) };
    };
    const early = await outcome('');
    expect(early).toEqual(await outcome('\n'));
    expect(early.lines[0]).toMatch(/"code":-32603/);
    expect(early.lines[1]).toMatch(/^\{"id":2,/);
  });

  it('lets the server find a stdout that is already closed', async () => {
    const server = open();
    server.child.stdout.destroy();
    server.child.stdin.write(initialize({ clientName: 'c' }));
    expect(await server.close()).toEqual({ code: 0, signal: null });
    expect(server.stderr).not.toContain(EARLY);
  });
});

describe('--help and --version', () => {
  it('print on stdout and exit 0, whatever EXEC_SERVER_LOG says', () => {
    const run = (flag: string) =>
      spawnSync(process.execPath, [CLI, flag], { env: { ...process.env, EXEC_SERVER_LOG: 'loud' }, encoding: 'utf8' });
    const version = run('--version');
    expect(version.status).toBe(0);
    expect(version.stdout).toMatch(/^exec-server \d+\.\d+\.\d+\n$/);
    const help = run('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: exec-server/);
  });
});
