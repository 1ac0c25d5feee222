import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { describe, it, vi } from 'vitest';
import { bodyServer, closeLoopback, listenLoopback } from './support/loopback.js';
import { bodiesAnswered, bytesRead, overStdio, overWebSocket, readingSettled, rssBytes, serverFor } from './support/stalled-client.js';

const MiB = 1024 * 1024;
/**
 * What the stalled client is sent: a server that kept reading during the stall took all of it in
 * and grew by more (52-64 MiB, against 3-14 MiB while it holds back); no more, for the suite's time.
 */
const FLOOD_BYTES = 32 * MiB;
const BODY_BYTES = 32 * MiB;
const STALL_GROWTH_BYTES = 32 * MiB;
/**
 * The answer budget of the servers that test it: a quarter of the default 64 MiB, with answers a
 * quarter of the size, tests the same bound for a quarter of the bytes (the flag's default is
 * tested in test/unit/cli/args.test.ts).
 */
const BUDGET_BYTES = 16 * MiB;
const BUDGET_ARGS = ['--answer-budget-bytes', String(BUDGET_BYTES)];

describe.concurrent('backpressure', () => {
  it('holds a 32 MiB writer back while the client stalls, then delivers every byte', async (context) => {
    const { expect } = context;
    const server = await serverFor(context);
    server.keepOutput = false;
    const pid = server.child.pid!;
    const before = rssBytes(pid);
    server.child.stdout.pause();
    server.send({
      id: 'flood',
      method: 'process/start',
      params: { processId: 'flood', argv: ['head', '-c', String(FLOOD_BYTES), '/dev/zero'], cwd: '/', env: {}, tty: false },
    });
    // The scenario itself is a client that reads nothing for 3 s: a server that kept reading would take in all 32 MiB at any rate above 11 MiB/s.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const stalled = rssBytes(pid);
    server.child.stdout.resume();
    await server.waitClosed('flood', 60_000);
    expect(server.outputBytes.get('flood')).toBe(FLOOD_BYTES);
    expect(stalled - before).toBeLessThan(STALL_GROWTH_BYTES);
  }, 90_000);
});

describe.concurrent.each([
  ['stdio, a write per request', overStdio],
  ['WebSocket', overWebSocket],
])('backpressure on answers (%s)', (_name, connect) => {
  it('stops reading requests while a client that sent 300 fs/readFile reads nothing, then answers them all', async (context) => {
    const { expect } = context;
    const FILE_BYTES = 64 * 1024;
    const COUNT = 300;
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'answers-held-')), 'blob');
    fs.writeFileSync(file, Buffer.alloc(FILE_BYTES, 'x'));
    const client = await connect(context);
    try {
      const [rssBefore, readBefore] = [rssBytes(client.pid), bytesRead(client.pid)];
      client.stopReading();
      for (let i = 0; i < COUNT; i++) await client.send({ id: `r${i}`, method: 'fs/readFile', params: { path: file } });
      // The server has done what it will while nobody reads: it reads no more files.
      const last = await readingSettled(client.pid, readBefore + 16 * FILE_BYTES);
      // A server that kept reading took in all 300 (19 MiB of files, 25 MiB of answers); one that holds
      // back, 67-113 of them and 8-13 MiB.
      expect((last - readBefore) / FILE_BYTES).toBeLessThan(COUNT / 2);
      expect(rssBytes(client.pid) - rssBefore).toBeLessThan(24 * MiB);
      client.resumeReading();
      const ids = Array.from({ length: COUNT }, (_, i) => `r${i}`);
      await vi.waitFor(() => expect(ids.filter((id) => !client.answers.has(id))).toEqual([]), { timeout: 30_000, interval: 50 });
      const sizes = ids.map((id) => client.answers.get(id)?.result?.dataBase64?.length);
      expect(sizes.filter((size) => size !== Math.ceil(FILE_BYTES / 3) * 4)).toEqual([]);
    } finally {
      await client.dispose();
      fs.rmSync(path.dirname(file), { recursive: true });
    }
  }, 60_000);
});

describe.concurrent('backpressure on large answers', () => {
  it('holds the files read for a client that reads nothing to about its budget, then sends every one whole', async (context) => {
    const { expect } = context;
    const FILE_BYTES = BUDGET_BYTES / 8;
    const COUNT = 16; // twice the budget, and fewer than the requests read before the input hold: only the budget stops them
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'answers-large-')), 'blob');
    fs.writeFileSync(file, randomBytes(FILE_BYTES));
    const client = await overStdio(context, BUDGET_ARGS);
    try {
      const [rssBefore, readBefore] = [rssBytes(client.pid), bytesRead(client.pid)];
      client.stopReading();
      for (let i = 0; i < COUNT; i++) await client.send({ id: `big${i}`, method: 'fs/readFile', params: { path: file } });
      const last = await readingSettled(client.pid, readBefore + 4 * FILE_BYTES);
      // A server without the budget read all 16 and held them.
      expect((last - readBefore) / FILE_BYTES).toBeLessThan(12);
      expect(rssBytes(client.pid) - rssBefore).toBeLessThan(14 * FILE_BYTES);
      client.resumeReading();
      const ids = Array.from({ length: COUNT }, (_, i) => `big${i}`);
      await vi.waitFor(() => expect(ids.filter((id) => !client.answers.has(id))).toEqual([]), { timeout: 30_000, interval: 50 });
      const expected = fs.readFileSync(file).toString('base64');
      expect(ids.filter((id) => client.answers.get(id)?.result?.dataBase64 !== expected)).toEqual([]);
    } finally {
      await client.dispose();
      fs.rmSync(path.dirname(file), { recursive: true });
    }
  }, 60_000);
});

describe.concurrent('backpressure on buffered HTTP bodies', () => {
  it('stops taking in buffered bodies for a client that reads nothing once its budget of answers wait, then answers every one whole', async (context) => {
    const { expect } = context;
    const BODY_BYTES = BUDGET_BYTES / 8;
    const COUNT = 12; // one and a half budgets: a server without the budget took in every body and held it
    const body = randomBytes(BODY_BYTES);
    // Half declare their length, half come chunked: both take each chunk only while there is room.
    const web = http.createServer((request, response) => {
      if (request.url === '/declared') response.setHeader('content-length', BODY_BYTES);
      response.end(body);
    });
    const base = await listenLoopback(web);
    const client = await overStdio(context, BUDGET_ARGS);
    try {
      const readBefore = bytesRead(client.pid);
      client.stopReading();
      for (let i = 0; i < COUNT; i++) {
        const url = `${base}/${i % 2 === 0 ? 'declared' : 'chunked'}`;
        await client.send({ id: `h${i}`, method: 'http/request', params: { method: 'GET', url, requestId: `h${i}` } });
        // One body after the other until the budget is full: 8 bodies besides the largest answer, which may
        // be on its way (a body still coming in holds nothing, so bodies read side by side all go on).
        const expected = readBefore + Math.min(i + 1, 9) * BODY_BYTES;
        await vi.waitFor(() => expect(bytesRead(client.pid)).toBeGreaterThanOrEqual(expected), { timeout: 20_000, interval: 10 });
      }
      const last = await readingSettled(client.pid, readBefore + 9 * BODY_BYTES);
      // What the server read (bodies and requests alike): the budget's 9 bodies, and what the three
      // requests left waiting read of their sockets before their bodies paused (1.5-1.8 MiB in all,
      // whatever the bodies' size); 12.6 bodies without the budget. RSS is not asserted: a chunked
      // body's pieces are garbage once joined, freed when V8 gets to them.
      expect(last - readBefore).toBeLessThan(9 * BODY_BYTES + 4 * MiB);
      client.resumeReading();
      const ids = Array.from({ length: COUNT }, (_, i) => `h${i}`);
      const expected = body.toString('base64');
      expect((await bodiesAnswered(client, ids)).filter((answer) => answer !== expected).length).toBe(0);
    } finally {
      await closeLoopback(web);
    }
  }, 60_000);
});

describe.concurrent('answers that wait only for the client', () => {
  it('never holds a file read for a body still coming in: a remote that ends its body once the client wrote a file', async (context) => {
    const { expect } = context;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-body-wait-'));
    const [file, flag] = [path.join(dir, 'file'), path.join(dir, 'flag')];
    const [FILE_BYTES, HEAD_BYTES] = [BUDGET_BYTES / 2, (BUDGET_BYTES * 5) / 8];
    fs.writeFileSync(file, Buffer.alloc(FILE_BYTES, 1));
    // Most of the body at once, the rest once the flag exists: with the file, more than the budget.
    const web = http.createServer((_request, response) => {
      response.write(Buffer.alloc(HEAD_BYTES, 97));
      const poll = setInterval(() => {
        if (!fs.existsSync(flag)) return;
        clearInterval(poll);
        response.end('end');
      }, 20);
      response.on('close', () => clearInterval(poll));
    });
    const base = await listenLoopback(web);
    const server = await serverFor(context, BUDGET_ARGS);
    try {
      // Generous waits: the suite runs this beside other heavy tests.
      const answer = (id: string, method: string, params: unknown) => {
        server.send({ id, method, params });
        return server.waitFor((message) => message.id === id && !('method' in message), 45_000);
      };
      // What the server read itself at start does not count (about 1 MiB, most of the margin here).
      const readBefore = bytesRead(server.child.pid!);
      const body = answer('h', 'http/request', { method: 'GET', url: `${base}/`, requestId: 'h' });
      await vi.waitFor(() => expect(bytesRead(server.child.pid!) - readBefore).toBeGreaterThan(HEAD_BYTES), {
        timeout: 20_000,
        interval: 50,
      });
      const read = await answer('read', 'fs/readFile', { path: file });
      expect(read.result.dataBase64.length).toBe(Math.ceil(FILE_BYTES / 3) * 4);
      expect((await answer('flag', 'fs/writeFile', { path: flag, dataBase64: '' })).result).toEqual({});
      expect((await body).result.bodyBase64.length).toBe(Math.ceil((HEAD_BYTES + 3) / 3) * 4);
    } finally {
      await closeLoopback(web);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe.concurrent('output integrity', () => {
  it('delivers distinct output unaltered through a stall (line buffers are reused only after the write)', async (context) => {
    const { expect } = context;
    const server = await serverFor(context);
    server.child.stdout.pause();
    server.send({
      id: 'count',
      method: 'process/start',
      params: { processId: 'count', argv: ['seq', '1', '1000000'], cwd: '/', env: { PATH: '/usr/bin:/bin' }, tty: false },
    });
    // A client that reads nothing for a moment, so that lines queue up in the server.
    await new Promise((resolve) => setTimeout(resolve, 300));
    server.child.stdout.resume();
    await server.waitClosed('count', 30_000);
    const expected = Array.from({ length: 1_000_000 }, (_, i) => `${i + 1}\n`).join('');
    const output = server.output('count').toString();
    expect(output.length).toBe(expected.length);
    expect(output === expected).toBe(true);
  });
});

describe.concurrent('output memory is reused only once nothing needs it', () => {
  it('keeps retained output exact while a flood recycles the memory of evicted chunks, pipes and PTY alike', async (context) => {
    const { expect } = context;
    const server = await serverFor(context);
    // 8 MiB of distinct bytes (hex of random bytes: a terminal passes it unchanged).
    const data = Buffer.from(randomBytes(4 * 1024 * 1024).toString('hex'));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-recycle-'));
    const file = path.join(dir, 'data');
    fs.writeFileSync(file, data);
    try {
      for (const tty of [false, true]) {
        const id = tty ? 'pty' : 'pipe';
        await server.start(id, ['cat', file], { tty });
        await server.waitClosed(id);
        const streamed = server.output(id);
        expect(streamed.length).toBe(data.length);
        expect(streamed.equals(data)).toBe(true);
        // What is still retained must be the newest bytes, unchanged by the reads that came after it.
        const { chunks } = await server.request('process/read', { processId: id, afterSeq: 0 });
        const retained = Buffer.concat(chunks.map((chunk: { chunk: string }) => Buffer.from(chunk.chunk, 'base64')));
        expect(retained.length).toBeGreaterThan(512 * 1024);
        expect(retained.equals(data.subarray(data.length - retained.length))).toBe(true);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.concurrent('backpressure on streamed HTTP bodies', () => {
  it('stops reading a body while the client stalls, then delivers all of it', async (context) => {
    const { expect } = context;
    const total = BODY_BYTES;
    const { server: web } = bodyServer(total, 1024 * 1024);
    const url = `${await listenLoopback(web)}/`;
    const server = await serverFor(context);
    try {
      let received = 0;
      server.keepOutput = false;
      await server.request('http/request', { method: 'GET', url, requestId: 'big', streamResponse: true });
      const before = rssBytes(server.child.pid!);
      server.child.stdout.pause();
      // The scenario itself is a client that reads nothing for 3 s.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const stalled = rssBytes(server.child.pid!);
      server.child.stdout.resume();
      const done = await server.waitFor((m) => {
        if (m.method !== 'http/request/bodyDelta') return false;
        received += Buffer.from(m.params.deltaBase64, 'base64').length;
        return m.params.done;
      }, 60_000);
      expect(done.params.error).toBeNull();
      expect(received).toBe(total);
      expect(stalled - before).toBeLessThan(STALL_GROWTH_BYTES);
    } finally {
      await closeLoopback(web);
    }
  }, 90_000);
});
