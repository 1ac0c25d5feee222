/**
 * What `http/request` may cost the server, through the real CLI and a real
 * HTTP server on 127.0.0.1: bodies requested side by side for a client that
 * reads nothing stay near its answer budget, requests in flight are bounded
 * (each holds a descriptor), and a declared length is not taken on trust
 * for one allocation.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { describe, it, vi } from 'vitest';
import { closeLoopback, listenLoopback } from './support/loopback.js';
import { memoryBytes } from './support/proc.js';
import { bodiesAnswered, bytesRead, overStdio, readingSettled, serverFor } from './support/stalled-client.js';

const MiB = 1024 * 1024;
const BUDGET_BYTES = 16 * MiB;

describe.concurrent('http/request within bounds', () => {
  it('takes in bodies requested all at once for a client that reads nothing only to about its budget, then answers every one whole', async (context) => {
    const { expect } = context;
    const BODY_BYTES = BUDGET_BYTES / 2;
    const COUNT = 12; // six budgets: a server that read every body on took in all of them
    const body = randomBytes(BODY_BYTES);
    const web = http.createServer((request, response) => {
      if (request.url === '/declared') response.setHeader('content-length', BODY_BYTES);
      response.end(body);
    });
    const base = await listenLoopback(web);
    const client = await overStdio(context, ['--answer-budget-bytes', String(BUDGET_BYTES)]);
    try {
      const readBefore = bytesRead(client.pid);
      client.stopReading();
      const ids = Array.from({ length: COUNT }, (_, i) => `h${i}`);
      for (const [i, id] of ids.entries()) {
        const url = `${base}/${i % 2 === 0 ? 'declared' : 'chunked'}`;
        await client.send({ id, method: 'http/request', params: { method: 'GET', url, requestId: id } });
      }
      const read = (await readingSettled(client.pid, readBefore + BODY_BYTES)) - readBefore;
      // The budget, the largest body held besides it, and what each socket took before its body paused.
      expect(read).toBeLessThan(BUDGET_BYTES + BODY_BYTES + 8 * MiB);
      client.resumeReading();
      const expected = body.toString('base64');
      expect((await bodiesAnswered(client, ids)).filter((answer) => answer !== expected).length).toBe(0);
    } finally {
      await closeLoopback(web);
    }
  }, 60_000);

  it('lets a body go on though a larger one coming in beside it stalls (the wait is on a remote, not on the client)', async (context) => {
    const { expect } = context;
    const stalled: http.ServerResponse[] = [];
    const web = http.createServer((request, response) => {
      if (request.url === '/stall') {
        // Declares 20 MiB, sends 10 and stops: over the budget with the other body, and never finishing.
        response.writeHead(200, { 'content-length': String(20 * MiB) });
        response.write(Buffer.alloc(10 * MiB, 1));
        stalled.push(response);
      } else response.end(Buffer.alloc(10 * MiB, 2));
    });
    const base = await listenLoopback(web);
    const server = await serverFor(context, ['--answer-budget-bytes', String(BUDGET_BYTES)]);
    try {
      const stalling = server.call('http/request', { method: 'GET', url: `${base}/stall`, requestId: 'a', timeoutMs: 15_000 });
      let stallingAnswered = false;
      void stalling.then(() => (stallingAnswered = true));
      await vi.waitFor(() => expect(stalled.length).toBe(1), { timeout: 10_000, interval: 20 });
      const answer = await server.request('http/request', { method: 'GET', url: `${base}/fast`, requestId: 'b' });
      expect(Buffer.from(answer.bodyBase64, 'base64').equals(Buffer.alloc(10 * MiB, 2))).toBe(true);
      expect(stallingAnswered).toBe(false); // not answered only once the other timed out
      stalled[0]!.socket?.destroy();
      expect((await stalling).error?.code).toBe(-32603);
    } finally {
      await closeLoopback(web);
    }
  }, 60_000);

  it('refuses a request beyond 256 in flight, naming the bound, and takes requests again once one is answered', async (context) => {
    const { expect } = context;
    const waiting: http.ServerResponse[] = [];
    let arrived = 0;
    const web = http.createServer((request, response) => {
      arrived++;
      if (request.url === '/hang') waiting.push(response);
      else response.end('ok');
    });
    const base = await listenLoopback(web);
    const server = await serverFor(context);
    try {
      const hanging = Array.from({ length: 256 }, (_, i) =>
        server.call('http/request', { method: 'GET', url: `${base}/hang`, requestId: `hang${i}` }),
      );
      await vi.waitFor(() => expect(arrived).toBe(256), { timeout: 20_000, interval: 20 });
      expect(await server.error('http/request', { method: 'GET', url: `${base}/fast`, requestId: 'one-too-many' })).toEqual({
        code: -32600,
        message: 'at most 256 http/request calls may be in flight per connection; wait for one to finish',
      });
      // Other methods still get descriptors meanwhile.
      expect((await server.runToClose('beside', ['true'])).exitCode).toBe(0);
      waiting.shift()!.end('done');
      expect((await hanging[0]!).result?.status).toBe(200);
      expect((await server.request('http/request', { method: 'GET', url: `${base}/fast`, requestId: 'again' })).status).toBe(200);
      for (const response of waiting.splice(0)) response.end('done');
      expect((await Promise.all(hanging)).filter((answer) => answer.result?.status !== 200)).toEqual([]);
    } finally {
      await closeLoopback(web);
    }
  }, 60_000);

  it('reserves no gigabyte for a response that declares one and sends a byte', async (context) => {
    const { expect } = context;
    const web = http.createServer((request, response) => {
      if (request.url !== '/liar') return response.end('ok');
      response.writeHead(200, { 'content-length': '1000000000' });
      response.write('x', () => response.socket?.destroy()); // a byte, then the connection is cut
    });
    const base = await listenLoopback(web);
    const server = await serverFor(context);
    try {
      const pid = server.child.pid!;
      // undici loaded and its connections made first: its parser reserves address space of its own (WebAssembly).
      const warm = Array.from({ length: 8 }, (_, i) => server.request('http/request', { method: 'GET', url: base, requestId: `w${i}` }));
      await Promise.all(warm);
      const before = memoryBytes(pid, 'VmSize');
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => server.call('http/request', { method: 'GET', url: `${base}/liar`, requestId: `liar${i}` })),
      );
      expect(answers.map((answer) => answer.error?.code)).toEqual(Array(8).fill(-32603));
      // Each would have reserved 1 GB up front; a server touches less than its reservations, so RSS would not show it.
      expect(memoryBytes(pid, 'VmSize') - before).toBeLessThan(4 * 1024 * MiB);
    } finally {
      await closeLoopback(web);
    }
  }, 60_000);
});
