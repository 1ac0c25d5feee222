/**
 * Redirects as the reference follows them, side by side with Codex 0.169.0
 * when installed: which statuses are followed, what becomes of the method,
 * the body and its headers, the referer each hop sends, and the errors for
 * too many hops and a target that is not HTTP.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecServerClient } from '../src/index.js';
import { type Contestant, contestants, hasReference } from './support/differential.js';
import { closeLoopback, listenLoopback } from './support/loopback.js';

let servers: Contestant[];
let web: http.Server;
let base: string;
let hops: Array<{ method: string; url: string; headers: Record<string, string>; body: string }> = [];

beforeAll(async () => {
  web = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const { host: _host, connection: _connection, ...headers } = request.headers as Record<string, string>;
      hops.push({ method: request.method!, url: request.url!, headers, body: Buffer.concat(chunks).toString() });
      const url = new URL(request.url!, 'http://x');
      const status = Number(url.searchParams.get('status') ?? 0);
      const to = url.searchParams.get('to');
      if (status && to) response.writeHead(status, { location: to.replace('BASE', base) }).end();
      else if (url.pathname === '/loop') response.writeHead(302, { location: '/loop' }).end();
      else if (url.pathname === '/stall') response.writeHead(302, { location: '/landing' }).write('a body that never ends');
      else if (url.pathname === '/utf8') response.writeHead(302, { location: Buffer.from('/landing-ü').toString('latin1') }).end();
      else response.end('landed');
    });
  });
  base = await listenLoopback(web);
  servers = await contestants();
  for (const { server } of servers) await server.request('environment/info', null);
});

afterAll(async () => {
  await Promise.all(servers.map((contestant) => contestant.dispose()));
  await closeLoopback(web);
});

/** Each contestant's answer (status and body, or error) and the hops the web server saw, compared. */
async function follow(params: Record<string, unknown>) {
  const outcomes: Record<string, unknown> = {};
  for (const { name, server } of servers) {
    hops = [];
    const response = await server.call('http/request', { method: 'GET', requestId: 'r', ...params });
    const answer = response.error ?? { status: response.result.status, body: Buffer.from(response.result.bodyBase64, 'base64').toString() };
    outcomes[name] = JSON.parse(JSON.stringify({ answer, hops }).split(base).join('BASE'));
  }
  if (hasReference) expect(outcomes.ours).toEqual(outcomes.reference);
  return outcomes.ours as { answer: { status?: number; body?: string; message?: string }; hops: typeof hops };
}

const post = (status: number) => ({
  method: 'POST',
  url: `${base}/start?status=${status}&to=/landing`,
  headers: [
    { name: 'content-type', value: 'text/plain' },
    { name: 'authorization', value: 'Bearer t' },
  ],
  bodyBase64: Buffer.from('payload').toString('base64'),
});

describe('http/request redirects, side by side with the reference', () => {
  it('turns a POST into a GET without body or content headers on 301, 302 and 303, and keeps both on 307 and 308', async () => {
    for (const status of [301, 302, 303]) {
      const { hops: seen } = await follow(post(status));
      expect(seen[1]).toMatchObject({ method: 'GET', body: '' });
      expect(seen[1]!.headers['content-type']).toBeUndefined();
      expect(seen[1]!.headers.referer).toBe(`BASE/start?status=${status}&to=/landing`);
    }
    for (const status of [307, 308]) {
      const { hops: seen } = await follow(post(status));
      expect(seen[1]).toMatchObject({
        method: 'POST',
        body: 'payload',
        headers: { 'content-type': 'text/plain', authorization: 'Bearer t' },
      });
    }
  });

  it('answers a 300 instead of following it', async () => {
    expect((await follow({ url: `${base}/start?status=300&to=/landing` })).answer).toMatchObject({ status: 300 });
  });

  it('sends only the origin as referer across origins, and leaves credentials behind', async () => {
    const other = base.replace('127.0.0.1', 'localhost');
    const { hops: seen } = await follow({ ...post(307), url: `${base}/start?status=307&to=${other}/landing` });
    expect(seen[1]!.headers.referer).toBe('BASE/');
    expect(seen[1]!.headers.authorization).toBeUndefined();
  });

  it('follows a redirect without reading its body (one that never ends), and answers one whose location is not ASCII', async () => {
    const stalled = await follow({ url: `${base}/stall` });
    expect(stalled.answer).toEqual({ status: 200, body: 'landed' });
    const utf8 = await follow({ url: `${base}/utf8` });
    expect(utf8.answer).toMatchObject({ status: 302 });
    expect(utf8.hops).toHaveLength(1);
  });

  it('fails after ten redirects, and on a target that is not HTTP', async () => {
    const loop = await follow({ url: `${base}/loop` });
    expect(loop.answer).toEqual({ code: -32603, message: 'http/request failed: too many redirects' });
    expect(loop.hops).toHaveLength(11);
    expect((await follow({ url: `${base}/start?status=302&to=ftp://127.0.0.1/x` })).answer).toEqual({
      code: -32603,
      message: 'http/request failed: redirect target uses unsupported URL scheme: ftp',
    });
  });

  it('lets the client library stop at the first redirect, and refuses that over generation 1', async () => {
    const url = `${base}/start?status=302&to=/landing`;
    const modern = await ExecServerClient.spawn();
    const legacy = await ExecServerClient.spawn({ protocolGeneration: 1 });
    try {
      const stopped = await modern.httpRequest({ method: 'GET', url, redirectPolicy: 'stop' });
      expect([stopped.status, stopped.headers.find((header) => header.name === 'location')?.value]).toEqual([302, '/landing']);
      const streamed = await modern.httpRequestStream({ method: 'GET', url, redirectPolicy: 'stop' });
      expect(streamed.status).toBe(302);
      for await (const _chunk of streamed.body); // to its end
      expect((await modern.httpRequest({ method: 'GET', url })).body.toString()).toBe('landed');
      const refusal = { message: 'redirectPolicy is not supported: protocol generation 1 always follows redirects' };
      await expect(legacy.httpRequest({ method: 'GET', url, redirectPolicy: 'stop' })).rejects.toMatchObject(refusal);
      await expect(legacy.httpRequestStream({ method: 'GET', url, redirectPolicy: 'stop' })).rejects.toMatchObject(refusal);
      expect((await legacy.httpRequest({ method: 'GET', url, redirectPolicy: 'follow' })).status).toBe(200);
    } finally {
      await modern.close();
      await legacy.close();
    }
  });
});
