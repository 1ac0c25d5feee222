/**
 * `exec-server --listen ws://…` through the real CLI: token auth, Origin
 * refusal, loopback-only without auth, a session per connection, one
 * message per text frame, and a dropped connection ending its processes.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ExecServerClient, createExecutor } from '../src/index.js';
import { findByCmdline, waitDead, waitFound } from './support/proc.js';
import { CLI } from './support/server-process.js';
import { startWebSocketListener, type WebSocketListener } from './support/websocket-server.js';

const TOKEN = 'test-token-1234';
let dir: string;
let listener: WebSocketListener;
let url: string;

/** Our CLI as a listener with `args` (stopped and awaited by the caller). */
const listen = (args: string[]) => startWebSocketListener(process.execPath, [CLI, ...args]);

/** The HTTP status (or 101) an upgrade with these headers gets (at `path` of the listener's URL). */
function upgradeStatus(headers: Record<string, string>, path = ''): Promise<number> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url + path, { headers });
    socket.once('open', () => {
      socket.close();
      resolve(101);
    });
    socket.once('unexpected-response', (_request, response) => {
      socket.terminate();
      resolve(response.statusCode ?? 0);
    });
    socket.once('error', () => undefined);
  });
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-'));
  fs.writeFileSync(path.join(dir, 'token'), `${TOKEN}\n`);
  listener = await listen(['--listen', 'ws://127.0.0.1:0', '--ws-auth', 'capability-token', '--ws-token-file', path.join(dir, 'token')]);
  url = listener.url;
});

afterAll(async () => {
  await listener.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('exec-server --listen ws://', () => {
  it('answers 401 without the token or with a wrong one, 403 for a foreign Origin, and upgrades otherwise; logs refusals, never a token', async () => {
    expect(await upgradeStatus({})).toBe(401);
    await listener.output(/refused a connection from 127\.0\.0\.1: no token/);
    expect(await upgradeStatus({ Authorization: 'Bearer not-the-token-9876' })).toBe(401);
    await listener.output(/refused a connection from 127\.0\.0\.1: wrong token/);
    expect(await upgradeStatus({ Authorization: `Bearer ${TOKEN}`, Origin: 'https://evil.example' })).toBe(403);
    await listener.output(/refused a connection from 127\.0\.0\.1: Origin "https:\/\/evil\.example" is not allowed/);
    expect(await upgradeStatus({ Authorization: `Bearer ${TOKEN}` })).toBe(101);
    expect(listener.printed()).not.toMatch(/not-the-token-9876|test-token-1234/);
  });

  it('serves a session per connection through the client and executors', async () => {
    const first = await ExecServerClient.connectWebSocket(url, { token: TOKEN });
    const second = await createExecutor({ url, token: TOKEN });
    try {
      expect(first.sessionId).not.toBe('');
      const result = await first.run(['sh', '-c', 'echo over websocket; exit 4']);
      expect([result.exitCode, result.stdout.toString()]).toEqual([4, 'over websocket\n']);
      // The same processId in two connections: two sessions, no clash.
      const session = await first.start({ argv: ['sleep', '30.91'], processId: 'same' });
      const started = await second.start({ processId: 'same', argv: ['true'], cwd: '/tmp', env: { PATH: '/usr/bin:/bin' }, tty: false });
      expect(started.processId).toBe('same');
      await session.terminate();
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('takes an answer frame over the ws package default of 100 MiB (a 90 MiB file read whole)', async () => {
    const file = path.join(dir, 'big');
    const data = Buffer.alloc(90 * 1024 * 1024, 7);
    data.write('end', data.length - 3);
    fs.writeFileSync(file, data);
    const client = await ExecServerClient.connectWebSocket(url, { token: TOKEN });
    try {
      expect((await client.readFile(file)).equals(data)).toBe(true);
    } finally {
      await client.close();
      fs.rmSync(file);
    }
  });

  it('takes a message sent in more fragments than the ws package allows by default (16,384)', async () => {
    const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${TOKEN}` } });
    await new Promise((resolve) => socket.once('open', resolve));
    const answers: string[] = [];
    // The second message (the write's answer), or the socket's close: whichever comes first.
    const answered = new Promise((resolve) => {
      socket.on('message', (data) => answers.push(data.toString()) === 2 && resolve(undefined));
      socket.once('close', resolve);
    });
    const send = (text: string, fin: boolean) => new Promise((resolve) => socket.send(text, { binary: false, fin }, resolve));
    await send('{"id":1,"method":"initialize","params":{"clientName":"fragments"}}', true);
    await send('{"method":"initialized","params":{}}', true);
    const parts = 20_000;
    await send(`{"id":2,"method":"fs/writeFile","params":{"path":"${path.join(dir, 'fragmented')}","dataBase64":"`, false);
    for (let i = 0; i < parts; i++) await send('QUJD', false); // "ABC" each
    await send('"}}', true);
    await answered;
    socket.close();
    expect(answers[1]?.slice(0, 300)).toBe('{"id":2,"result":{}}');
    expect(fs.readFileSync(path.join(dir, 'fragmented'), 'latin1')).toBe('ABC'.repeat(parts));
  });

  it('keeps a message limit from 2 GiB on (ws takes 2^31 for no limit at all)', async () => {
    const big = await listen(['--listen', 'ws://127.0.0.1:0', '--max-line-bytes', String(2 ** 32)]);
    try {
      const socket = new WebSocket(big.url);
      await new Promise((resolve) => socket.once('open', resolve));
      // A masked text frame that claims 5 GB: refused at once, not waited for.
      const header = Buffer.alloc(14);
      header[0] = 0x81;
      header[1] = 0x80 | 127;
      header.writeBigUInt64BE(5_000_000_000n, 2);
      (socket as unknown as { _socket: import('node:net').Socket })._socket.write(header);
      // Bounded, so that a listener that waits for the 5 GB is still stopped below.
      const code = await Promise.race([
        new Promise((resolve) => socket.once('close', resolve)),
        new Promise((resolve) => setTimeout(() => resolve('still open after 5 s'), 5000)),
      ]);
      socket.terminate();
      expect(code).toBe(1009);
    } finally {
      await big.stop();
    }
  });

  it('refuses the connection with a clear error when the token is wrong', async () => {
    await expect(ExecServerClient.connectWebSocket(url, { token: 'nope' })).rejects.toMatchObject({
      kind: 'connectFailed',
      message: expect.stringContaining('HTTP 401'),
    });
    // And a URL it cannot connect to at all fails the same way, not with the URL parser's SyntaxError.
    for (const bad of ['not a url', 'http://127.0.0.1:1/']) {
      await expect(ExecServerClient.connectWebSocket(bad)).rejects.toMatchObject({ kind: 'connectFailed' });
    }
  });

  it('answers /readyz with 200 without a token, and serves sessions at / only, as the reference', async () => {
    const auth = { Authorization: `Bearer ${TOKEN}` };
    expect(await upgradeStatus({}, '/readyz')).toBe(200);
    expect(await upgradeStatus(auth, '/?client=x')).toBe(101);
    for (const path of ['/x', '//', '/readyz/']) expect(await upgradeStatus(auth, path)).toBe(404);
    // An absolute-form target (as a proxy sends it) names the same paths.
    const absolute = await new Promise<number>((resolve) => {
      const target = url.replace('ws:', 'http:');
      http.get(target, { path: `${target}/readyz` }, (response) => resolve(response.resume().statusCode ?? 0));
    });
    expect(absolute).toBe(200);
    const get = async (path: string) => (await fetch(url.replace('ws:', 'http:') + path)).status;
    expect(await get('/readyz')).toBe(200);
    expect(await get('/')).toBe(426);
    expect(await get('/x')).toBe(404);
  });

  it('takes the bearer scheme in any case, and spaces before the token', async () => {
    expect(await upgradeStatus({ Authorization: `bearer ${TOKEN}` })).toBe(101);
    expect(await upgradeStatus({ Authorization: `BEARER  ${TOKEN}` })).toBe(101);
    expect(await upgradeStatus({ Authorization: `Basic ${TOKEN}` })).toBe(401);
  });

  it('refuses a raw line break inside a string instead of changing the text, and takes one between tokens', async () => {
    const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${TOKEN}` } });
    await new Promise((resolve) => socket.once('open', resolve));
    const answers: string[] = [];
    const answered = new Promise((resolve) => socket.on('message', (data) => answers.push(data.toString()) === 3 && resolve(undefined)));
    socket.send('{"id":1,\r\n"method":"initialize","params":{"clientName":"breaks"}}');
    socket.send('{"id":2,"method":"bogus/a\nb"}');
    socket.send('{"id":3,"method":"bogus/a\\\nb"}'); // a raw break after a backslash
    await answered;
    socket.close();
    // Refused lines are answered at once, maybe ahead of an answer the connection is working on.
    const parsed = answers.map((answer) => JSON.parse(answer) as { id: unknown });
    expect(parsed.find((answer) => answer.id === 1)).toMatchObject({ result: { sessionId: expect.any(String) } });
    const refused = parsed.filter((answer) => answer.id !== 1);
    expect(refused).toHaveLength(2);
    // As over stdio: a parse error.
    for (const answer of refused)
      expect(answer).toMatchObject({
        id: null,
        error: { code: -32700, message: expect.stringMatching(/Bad (control|escaped) character/) },
      });
  });

  it('closes a connection that sends a binary frame (1003)', async () => {
    const code = await new Promise<number>((resolve) => {
      const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${TOKEN}` } });
      socket.once('open', () => socket.send(Buffer.from([1, 2, 3]), { binary: true }));
      socket.once('close', (closeCode) => resolve(closeCode));
    });
    expect(code).toBe(1003);
  });

  it('answers an empty or all-blank text message with a parse error, as Codex does, and goes on', async () => {
    const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${TOKEN}` } });
    await new Promise((resolve) => socket.once('open', resolve));
    const answers: Array<{ id: unknown; error?: { code: number; message: string } }> = [];
    const answered = new Promise((resolve) =>
      socket.on('message', (data) => answers.push(JSON.parse(data.toString())) === 4 && resolve(undefined)),
    );
    socket.send('');
    socket.send(' \t ');
    socket.send('\r\n');
    socket.send('{"id":7,"method":"initialize","params":{"clientName":"blank"}}');
    await answered;
    socket.close();
    expect(answers.filter((answer) => answer.id === 7)).toHaveLength(1);
    const refused = answers.filter((answer) => answer.id !== 7);
    expect(refused).toEqual(Array(3).fill({ id: null, error: { code: -32700, message: 'Parse error: an empty message' } }));
  });

  it('ends the processes of a connection that drops', async () => {
    const client = await ExecServerClient.connectWebSocket(url, { token: TOKEN });
    await client.start({ argv: ['sleep', '30.92'] });
    const sleeper = await waitFound('30.92', 'sleep');
    await client.close();
    expect(await waitDead(sleeper)).toEqual([]);
    expect(findByCmdline('30.91', 'sleep')).toEqual([]);
  });

  it('refuses a non-loopback address without a token, naming the flag to add', async () => {
    const child = spawn(process.execPath, [CLI, '--listen', 'ws://0.0.0.0:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (bytes) => (stderr += bytes));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('a non-loopback address needs --ws-auth capability-token');
  });

  it('prints its URL alone on stdout, as the reference does', async () => {
    const child = spawn(process.execPath, [CLI, '--listen', 'ws://127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const firstLine = await new Promise<string>((resolve) => {
        let text = '';
        child.stdout.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text.includes('\n')) resolve(text.slice(0, text.indexOf('\n')));
        });
      });
      expect(firstLine).toMatch(/^ws:\/\/127\.0\.0\.1:[1-9]\d*$/);
    } finally {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });

  it('kills its processes on a signal, and exits 0 on a second one, as over stdio (not killed by it)', async () => {
    const own = await listen(['--listen', 'ws://127.0.0.1:0']);
    try {
      const client = await ExecServerClient.connectWebSocket(own.url);
      await client.start({ argv: ['sleep', '30.93'] });
      const sleeper = await waitFound('30.93', 'sleep');
      process.kill(own.pid, 'SIGTERM');
      expect(await waitDead(sleeper)).toEqual([]);
      // The second comes while the listener finishes its close (two at once would be taken for one);
      // if it has finished already, there is nothing left to signal.
      try {
        process.kill(own.pid, 'SIGTERM');
      } catch (error) {
        expect((error as NodeJS.ErrnoException).code).toBe('ESRCH');
      }
      expect(await own.exitStatus).toEqual({ code: 0, signal: null });
      await client.close();
    } finally {
      await own.stop();
    }
  });

  it('listens on loopback without a token', async () => {
    const open = await listen(['--listen', 'ws://127.0.0.1:0']);
    try {
      const client = await ExecServerClient.connectWebSocket(open.url);
      expect((await client.run(['true'])).exitCode).toBe(0);
      await client.close();
    } finally {
      await open.stop();
    }
  });
});
