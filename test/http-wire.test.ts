/**
 * What an http/request puts on the wire and what its answer keeps, beside
 * Codex 0.169.0 when installed: header names lower-case, values as UTF-8,
 * URL userinfo as basic authorization, a caller's `transfer-encoding:
 * chunked` honoured; answered header values without
 * trailing blanks, and only those that are visible ASCII; no body for a 204
 * or a 304.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Contestant, contestants, hasReference } from './support/differential.js';
import { closeLoopback, listenLoopback } from './support/loopback.js';

let servers: Contestant[];
let web: http.Server;
let base: string;
let raw: net.Server;
let rawBase: string;
const received: Array<{ url: string; headers: string[]; body: string }> = [];

beforeAll(async () => {
  web = http.createServer((request, response) => {
    // Header values arrive as latin1 strings of their bytes: read them back as UTF-8.
    const headers = request.rawHeaders.map((text) => Buffer.from(text, 'latin1').toString('utf8'));
    const body: Buffer[] = [];
    request.on('data', (piece: Buffer) => body.push(piece));
    request.on('end', () => {
      received.push({ url: request.url!, headers, body: Buffer.concat(body).toString('utf8') });
      response.end('ok');
    });
  });
  base = await listenLoopback(web);
  // Response headers Node's own server would not write: raw bytes on the socket.
  raw = net.createServer((socket) => {
    socket.once('data', (request) => {
      // /status/N: a head of that status whose content-length promises a body it may not have.
      const status = /^GET \/status\/(\d+) /.exec(request.toString('latin1'))?.[1];
      if (status) return socket.end(`HTTP/1.1 ${status} X\r\ncontent-length: 10\r\n\r\n`);
      const head = ['HTTP/1.1 200 OK', 'x-plain: v  ', 'x-utf8: caf\u00c3\u00a9', 'x-latin: \u00ff', 'x-tab: a\tb', 'content-length: 0'];
      socket.end(Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'));
    });
  });
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  rawBase = `http://127.0.0.1:${(raw.address() as net.AddressInfo).port}`;
  servers = await contestants();
  for (const { server } of servers) await server.request('environment/info', null);
});

afterAll(async () => {
  await Promise.all(servers.map((contestant) => contestant.dispose()));
  await closeLoopback(web);
  await new Promise((resolve) => raw.close(resolve));
});

/** What the web server received from each contestant for one request (host and port left out). */
async function sent(url: string, headers: Array<{ name: string; value: string }>): Promise<string[]> {
  const seen: Record<string, string[]> = {};
  for (const { name, server } of servers) {
    expect((await server.request('http/request', { method: 'GET', url, requestId: `r-${name}`, headers })).status).toBe(200);
    const pairs = received.at(-1)!.headers;
    seen[name] = pairs.flatMap((text, index) => (index % 2 === 0 && text !== 'host' ? [`${text}: ${pairs[index + 1]}`] : []));
  }
  if (hasReference) expect(seen.ours!.filter((line) => line !== 'connection: keep-alive').sort()).toEqual(seen.reference!.sort());
  return seen.ours!;
}

describe('http/request on the wire, side by side with the reference', () => {
  it('sends header names lower-case, values as UTF-8, and userinfo as basic authorization', async () => {
    const lines = await sent(`${base.replace('//', '//us%65r:p%40ss@')}/wire`, [
      { name: 'X-Upper', value: 'café €' },
      { name: 'x-plain', value: 'v' },
    ]);
    expect(lines).toEqual(expect.arrayContaining(['x-upper: café €', 'x-plain: v', `authorization: Basic ${btoa('user:p@ss')}`]));
  });

  it("sends a body chunked when the caller's headers ask for it (undici refuses the header itself)", async () => {
    for (const { name, server } of servers) {
      const headers = [{ name: 'Transfer-Encoding', value: 'chunked' }];
      const params = {
        method: 'POST',
        url: `${base}/chunked`,
        requestId: `te-${name}`,
        headers,
        bodyBase64: Buffer.from('hello').toString('base64'),
      };
      expect((await server.request('http/request', params)).status).toBe(200);
      const { headers: pairs, body } = received.at(-1)!;
      expect({ name, body, te: pairs[pairs.findIndex((text) => text.toLowerCase() === 'transfer-encoding') + 1] }).toEqual({
        name,
        body: 'hello',
        te: 'chunked',
      });
      expect(pairs.map((text) => text.toLowerCase())).not.toContain('content-length');
    }
  });

  it('answers header values without trailing blanks, and leaves out those that are not visible ASCII', async () => {
    const answers: Record<string, unknown> = {};
    for (const { name, server } of servers) {
      answers[name] = (await server.request('http/request', { method: 'GET', url: `${rawBase}/`, requestId: `h-${name}` })).headers;
    }
    if (hasReference) expect(answers.ours).toEqual(answers.reference);
    expect(answers.ours).toEqual([
      { name: 'x-plain', value: 'v' },
      { name: 'x-tab', value: 'a\tb' },
      { name: 'content-length', value: '0' },
    ]);
  });

  it('answers a 204 or 304 with an empty body, whatever its content-length says, buffered or streamed', async () => {
    for (const status of [204, 304]) {
      for (const { name, server } of servers) {
        const url = `${rawBase}/status/${status}`;
        expect(await server.request('http/request', { method: 'GET', url, requestId: `b-${name}-${status}` })).toMatchObject({
          status,
          bodyBase64: '',
        });
        const requestId = `s-${name}-${status}`;
        await server.request('http/request', { method: 'GET', url, requestId, streamResponse: true });
        const end = await server.waitFor((m) => m.method === 'http/request/bodyDelta' && m.params.requestId === requestId && m.params.done);
        expect(end.params).toMatchObject({ deltaBase64: '', error: null });
      }
    }
  });

  it('names the URL in a failure as URL parsing normalized it, without userinfo', async () => {
    for (const { server } of servers) {
      expect(await server.error('http/request', { method: 'GET', url: 'HTTP://u:p@LOCALHOST:9/a/../b c?x#f', requestId: 'gone' })).toEqual({
        code: -32603,
        message: 'http/request failed: error sending request for url (http://localhost:9/b%20c?x#f)',
      });
    }
  });
});
