import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISCONNECTED, ExecServerClient, ExecServerClientError, ExecServerError, type ProcessEvent } from '../src/index.js';
import { findByCmdline, isAlive, waitDead } from './support/proc.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const FAKE = path.join(here, 'support/fake-server.mjs');
const fake = (scenario: string) => ({ command: process.execPath, args: [FAKE, scenario], initializeTimeoutMs: 5000 });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-client-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function readPid(file: string): Promise<number> {
  for (let i = 0; i < 250; i++) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : '';
    if (text) return Number(text);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no pid in ${file}`);
}

async function collect(session: AsyncIterable<ProcessEvent>): Promise<ProcessEvent[]> {
  const events: ProcessEvent[] = [];
  for await (const event of session) events.push(event);
  return events;
}

describe('against the real server', () => {
  let client: ExecServerClient;
  beforeAll(async () => {
    client = await ExecServerClient.spawn({ clientName: 'client-test' });
  });
  afterAll(async () => {
    await client.close();
  });

  it('completes the handshake and exposes the session id', () => {
    expect(client.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('runs commands on pipes and on a PTY', async () => {
    const piped = await client.run(['sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(piped).toMatchObject({ exitCode: 3, timedOut: false, truncated: false });
    expect(piped.stdout.toString()).toBe('out\n');
    expect(piped.stderr.toString()).toBe('err\n');
    const tty = await client.run(['sh', '-c', 'stty size'], { tty: true });
    expect(tty.output.toString()).toBe('24 80\r\n');
    const stdin = await client.run(['tr', 'a-z', 'A-Z'], { stdin: 'shout' });
    expect(stdin.stdout.toString()).toBe('SHOUT');
  });

  it('times out and truncates as asked', async () => {
    const slow = await client.run(['sleep', '10'], { timeoutMs: 100 });
    expect(client.protocolGeneration).toBe(2); // ours offers generation 2, so the client speaks it
    expect(slow).toMatchObject({ timedOut: true, exitCode: 137 });
    const big = await client.run(['head', '-c', '100000', '/dev/zero'], { maxOutputBytes: 1000 });
    expect(big.stdout.length).toBe(1000);
    expect(big.truncated).toBe(true);
  });

  it('gives a session events in order, Node streams, and typed calls', async () => {
    const session = await client.start({ argv: ['cat'], pipeStdin: true });
    const chunks: Buffer[] = [];
    session.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    expect(await session.write('hello ')).toBe('accepted');
    expect(await session.closeStdin('world')).toBe('accepted');
    expect(await session.wait()).toBe(0);
    expect(Buffer.concat(chunks).toString()).toBe('hello world');
    const read = await session.read({ afterSeq: 0 });
    expect(Buffer.concat(read.chunks.map((c) => c.chunk)).toString()).toBe('hello world');
  });

  it('keeps no backlog for a polling-only session (bufferEvents: false)', async () => {
    const session = await client.start({ argv: ['echo', 'polled'], bufferEvents: false });
    await session.wait();
    const read = await session.read();
    expect(Buffer.concat(read.chunks.map((c) => c.chunk)).toString()).toBe('polled\n');
    // Nothing was kept for a late consumer: the iterator ends without replaying.
    expect(await collect(session)).toEqual([]);
  });

  it('delivers the backlog to the first consumer, in seq order', async () => {
    const session = await client.start({ argv: ['sh', '-c', 'echo one; echo two >&2; echo three'] });
    const events = await collect(session);
    expect(events.map((e) => ('seq' in e ? e.seq : 0))).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)!.type).toBe('closed');
  });

  it('sends no params for none or null (not [null]), and refuses params that are not JSON-RPC params', async () => {
    const info = await client.request<{ platform: string }>('environment/info');
    expect(info.platform).toBe(process.platform);
    expect(await client.request('environment/info', null)).toMatchObject({ platform: process.platform });
    await expect(client.request('environment/info', 5)).rejects.toThrow(
      new TypeError('environment/info: params must be an object, an array or null, got number'),
    );
    await expect(client.request('fs/readFile', ['/etc/hostname'])).rejects.toMatchObject({ code: -32602 });
  });

  it('maps server errors to ExecServerError with code and message', async () => {
    const error = await client.start({ argv: [] }).catch((e) => e);
    expect(error).toBeInstanceOf(ExecServerError);
    expect(error).toMatchObject({ code: -32602, message: 'argv must not be empty' });
    await expect(client.readFile('/no/such/file')).rejects.toMatchObject({ code: -32004 });
  });

  it('reads and writes files and makes HTTP requests', async () => {
    const file = path.join(tmp, 'via-client');
    await client.writeFile(file, Buffer.from([1, 2, 3]));
    expect([...(await client.readFile(file))]).toEqual([1, 2, 3]);
    expect((await client.getMetadata(file)).isFile).toBe(true);
    expect((await client.readDirectory(tmp)).map((e) => e.fileName)).toContain('via-client');
    expect(await client.canonicalize(file)).toBe(fs.realpathSync(file));
    const web = http.createServer((_req, res) => {
      res.write('chunk1;');
      setTimeout(() => res.end('chunk2'), 20);
    });
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(web.address() as AddressInfo).port}/`;
      expect((await client.httpRequest({ method: 'GET', url })).body.toString()).toBe('chunk1;chunk2');
      const streamed = await client.httpRequestStream({ method: 'GET', url, requestId: 'once' });
      // The same id while that body streams: refused, and the first body still ends.
      await expect(client.httpRequestStream({ method: 'GET', url, requestId: 'once' })).rejects.toThrow('is already active');
      const parts: Buffer[] = [];
      for await (const part of streamed.body) parts.push(part);
      expect(Buffer.concat(parts).toString()).toBe('chunk1;chunk2');
    } finally {
      web.closeAllConnections();
      web.close();
    }
  });

  it('returns base64 text from request() even for answers that arrive decoded, and moves large payloads exactly', async () => {
    // Over 1 MiB of base64 each way: the request and the answer take the large-line paths.
    const data = Buffer.alloc(3 * 1024 * 1024 + 5);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7 + (i >> 12)) & 0xff;
    const file = path.join(tmp, 'large-payload');
    await client.writeFile(file, data);
    expect(fs.readFileSync(file).equals(data)).toBe(true);
    expect((await client.readFile(file)).equals(data)).toBe(true);
    const raw = await client.request('fs/readFile', { path: file });
    expect(raw.dataBase64).toBe(data.toString('base64'));
    const session = await client.start({ argv: ['cat'], pipeStdin: true });
    await session.closeStdin(data);
    const output: Buffer[] = [];
    for await (const event of session) if (event.type === 'output') output.push(event.chunk);
    expect(Buffer.concat(output).equals(data)).toBe(true);
  });
});

describe('against scripted servers', () => {
  /** Every event of process `p` as the client delivers it, against a scripted server. */
  async function scenarioEvents(scenario: string): Promise<ProcessEvent[]> {
    const client = await ExecServerClient.spawn(fake(scenario));
    try {
      return await collect(await client.start({ argv: ['x'], processId: 'p' }));
    } finally {
      await client.close();
    }
  }

  it('delivers events in seq order when notifications arrive out of order', async () => {
    expect(await scenarioEvents('reorder')).toEqual([
      { type: 'output', seq: 1, stream: 'stdout', chunk: Buffer.from('a') },
      { type: 'output', seq: 2, stream: 'stdout', chunk: Buffer.from('b') },
      { type: 'output', seq: 3, stream: 'stdout', chunk: Buffer.from('c') },
      { type: 'exited', seq: 4, exitCode: 7 },
      { type: 'closed', seq: 5 },
    ]);
  });

  it('accepts output notifications in any key order and with escaped ids', async () => {
    expect(await scenarioEvents('key-order')).toEqual([
      { type: 'output', seq: 1, stream: 'stdout', chunk: Buffer.from('one;') },
      { type: 'output', seq: 2, stream: 'stderr', chunk: Buffer.from('two') },
      { type: 'exited', seq: 3, exitCode: 0 },
      { type: 'closed', seq: 4 },
    ]);
  });

  it('fails sessions once, synthesizes reads, and rejects new work after a disconnect', async () => {
    const client = await ExecServerClient.spawn(fake('disconnect-after-start'));
    const session = await client.start({ argv: ['x'], processId: 'p' });
    const events = await collect(session);
    expect(events.at(-1)).toEqual({ type: 'failed', message: expect.stringMatching(new RegExp(`^${DISCONNECTED}`)) });
    expect(events.filter((e) => e.type === 'failed')).toHaveLength(1);
    expect(await session.read()).toMatchObject({ closed: true, exited: true, failure: expect.stringContaining(DISCONNECTED) });
    await expect(client.start({ argv: ['x'] })).rejects.toThrow(DISCONNECTED);
    await expect(client.environmentInfo()).rejects.toMatchObject({ kind: 'disconnected' });
    await client.close();
  });

  it('does not let a noisy session delay a quiet one', async () => {
    const client = await ExecServerClient.spawn(fake('noisy-quiet'));
    try {
      await client.start({ argv: ['x'], processId: 'noisy' });
      const started = Date.now();
      const quiet = await client.start({ argv: ['x'], processId: 'quiet' });
      const exited = await new Promise<ProcessEvent>((resolve) => quiet.once('exited', resolve));
      expect(exited).toEqual({ type: 'exited', seq: 1, exitCode: 17 });
      expect(Date.now() - started).toBeLessThan(5000); // not held until the noisy session's 4097 events are consumed (never)
    } finally {
      await client.close();
    }
  });

  it('rejects a server that never answers initialize, and kills it', async () => {
    const pidFile = path.join(tmp, 'silent.pid');
    const started = Date.now();
    const error = await ExecServerClient.spawn({
      command: 'sh',
      args: ['-c', `echo $$ > ${pidFile}; sleep 60`],
      initializeTimeoutMs: 300,
    }).catch((e) => e);
    expect(error).toBeInstanceOf(ExecServerClientError);
    expect(error).toMatchObject({ kind: 'handshakeTimeout', message: 'exec-server did not answer initialize within 300 ms' });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await waitDead([await readPid(pidFile)])).toEqual([]);
  });

  it('explains a server that exits during the handshake, and one that cannot start', async () => {
    const exited = await ExecServerClient.spawn({ command: 'sh', args: ['-c', 'echo "bad config" >&2; exit 3'] }).catch((e) => e);
    expect(exited).toMatchObject({ kind: 'serverExited' });
    expect(exited.message).toContain('exit code 3');
    expect(exited.message).toContain('bad config');
    const missing = await ExecServerClient.spawn({ command: '/no/such/exec-server' }).catch((e) => e);
    expect(missing).toMatchObject({ kind: 'spawnFailed' });
    expect(missing.message).toContain('/no/such/exec-server');
  });

  it('kills a server that prints a line that is not JSON-RPC', async () => {
    const pidFile = path.join(tmp, 'malformed.pid');
    const error = await ExecServerClient.spawn({
      command: 'sh',
      args: ['-c', `read _line; echo $$ > ${pidFile}; printf '%s\\n' 'not-json'; sleep 60`],
      initializeTimeoutMs: 5000,
    }).catch((e) => e);
    expect(error).toMatchObject({ kind: 'protocolViolation' });
    expect(error.message).toContain('"not-json"');
    expect(await waitDead([await readPid(pidFile)])).toEqual([]);
  });

  it('kills the server and its grandchild when the client closes', async () => {
    const serverPidFile = path.join(tmp, 'server.pid');
    const childPidFile = path.join(tmp, 'server-child.pid');
    // The seed's script, answering with the id it was sent (vscode-jsonrpc numbers from 0).
    const script = [
      'read line',
      `echo "$$" > ${serverPidFile}`,
      `sleep 60 >/dev/null 2>&1 & echo "$!" > ${childPidFile}`,
      `id=$(printf '%s' "$line" | sed 's/.*"id":\\([0-9]*\\).*/\\1/')`,
      `printf '{"id":%s,"result":{"sessionId":"stdio-test"}}\\n' "$id"`,
      'read _line',
      'wait',
    ].join('; ');
    const client = await ExecServerClient.spawn({ command: 'sh', args: ['-c', script], initializeTimeoutMs: 5000 });
    const pids = [await readPid(serverPidFile), await readPid(childPidFile)];
    expect(pids.every(isAlive)).toBe(true);
    await client[Symbol.asyncDispose]();
    expect(await waitDead(pids)).toEqual([]);
  });

  it('kills the server tree when the parent Node process exits without closing', async () => {
    const dist = path.resolve(here, '../dist/index.js');
    const program = `import { ExecServerClient } from ${JSON.stringify(dist)};
      const client = await ExecServerClient.spawn();
      await client.start({ argv: ['sleep', '60.61'] });
      const info = await client.environmentInfo();
      console.log(JSON.stringify({ server: info.pid }));
      process.exit(0);`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', program]);
    const { server } = JSON.parse(stdout) as { server: number };
    expect(await waitDead([server])).toEqual([]);
    expect(await waitDead(findByCmdline('60.61', 'sleep'))).toEqual([]);
  });
});
