/**
 * `http/request` through the proxies the server's environment names
 * (src/server/http/env-proxies.ts), beside Codex 0.169.0 when installed: a
 * proxy and an origin on 127.0.0.1, and what each request reached.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contestants } from './support/differential.js';
import { withoutProxies } from './support/server-process.js';

let proxy: http.Server;
let origin: http.Server;
let proxyUrl: string;
let originUrl: string;
const seen: string[] = [];

beforeAll(async () => {
  proxy = http.createServer((request, response) => {
    seen.push(`${request.method} ${request.url}`);
    // What it was given, for the requests that ask: the headers as they came (repeats too).
    if (request.url?.endsWith('/headers'))
      seen.push(
        ...request.rawHeaders
          .filter((_, at) => at % 2 === 0)
          .map((name, at) => `${name.toLowerCase()}: ${request.rawHeaders[at * 2 + 1]}`)
          .filter((line) => /^(x-a|cookie|proxy-authorization):/.test(line)),
      );
    if (request.url?.endsWith('/auth')) response.statusCode = 407;
    if (request.url?.endsWith('/big-head')) response.setHeader('x-big', 'b'.repeat(30_000));
    response.end('proxied');
  });
  proxy.on('connect', (request, socket) => {
    seen.push(`CONNECT ${request.url}`);
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  origin = http.createServer((_request, response) => response.end('direct'));
  for (const server of [proxy, origin]) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxyUrl = `127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
});
afterAll(() => {
  proxy.close();
  origin.close();
});

/** Each contestant's outcome of a GET of `url` under `env` (status and body, or error), with what the proxy saw; compared. */
async function through(
  env: Record<string, string>,
  url: string,
  headers: Array<{ name: string; value: string }> = [],
): Promise<{ outcome: string; proxySaw: string[] }> {
  const list = await contestants({ ...withoutProxies(process.env), ...env });
  const outcomes: Record<string, { outcome: string; proxySaw: string[] }> = {};
  try {
    for (const { name, server } of list) {
      seen.length = 0;
      const response = await server.call('http/request', { method: 'GET', url, headers, requestId: 'r', timeoutMs: 5000 });
      const { error, result } = response;
      const outcome = error
        ? `error ${error.code}`
        : `${result.status === 200 ? '' : `${result.status} `}${Buffer.from(result.bodyBase64, 'base64').toString()}`;
      outcomes[name] = { outcome, proxySaw: [...seen] };
    }
  } finally {
    await Promise.all(list.map((contestant) => contestant.dispose()));
  }
  if (outcomes.reference) expect(outcomes.ours).toEqual(outcomes.reference);
  return outcomes.ours!;
}

describe('http/request through the environment’s proxies, side by side with the reference', () => {
  it('sends an http URL to HTTP_PROXY (or ALL_PROXY) as an absolute-form request, loopback included', async () => {
    expect(await through({ HTTP_PROXY: `http://${proxyUrl}` }, `${originUrl}/a?q=1`)).toEqual({
      outcome: 'proxied',
      proxySaw: [`GET ${originUrl}/a?q=1`],
    });
    expect(await through({ http_proxy: proxyUrl }, 'http://example.invalid/x')).toEqual({
      outcome: 'proxied',
      proxySaw: ['GET http://example.invalid/x'],
    });
    expect(await through({ ALL_PROXY: `http://${proxyUrl}` }, 'http://example.invalid/y')).toMatchObject({ outcome: 'proxied' });
  });

  it('tunnels an https URL through HTTPS_PROXY with CONNECT, and not through HTTP_PROXY', async () => {
    expect(await through({ HTTPS_PROXY: `http://${proxyUrl}` }, 'https://example.invalid/a')).toEqual({
      outcome: 'error -32603',
      proxySaw: ['CONNECT example.invalid:443'],
    });
    expect(await through({ HTTP_PROXY: `http://${proxyUrl}` }, 'https://127.0.0.1:1/a')).toEqual({ outcome: 'error -32603', proxySaw: [] });
  });

  it('goes direct for NO_PROXY hosts and blocks, a proxy that is no URL, and in a CGI script', async () => {
    const proxied = { HTTP_PROXY: `http://${proxyUrl}` };
    const direct = { outcome: 'direct', proxySaw: [] };
    expect(await through({ ...proxied, NO_PROXY: '127.0.0.0/8' }, `${originUrl}/a`)).toEqual(direct);
    expect(await through({ ...proxied, no_proxy: 'other.example, 127.0.0.1' }, `${originUrl}/a`)).toEqual(direct);
    expect(await through({ ...proxied, NO_PROXY: 'localhost' }, `${originUrl.replace('127.0.0.1', 'LOCALHOST')}/a`)).toEqual(direct);
    expect(await through({ HTTP_PROXY: 'not a url::' }, `${originUrl}/a`)).toEqual(direct);
    expect(await through({ ...proxied, REQUEST_METHOD: 'GET' }, `${originUrl}/a`)).toEqual(direct);
    // `*` is every domain but no address.
    expect(await through({ ...proxied, NO_PROXY: '*' }, `${originUrl}/a`)).toEqual({
      outcome: 'proxied',
      proxySaw: [`GET ${originUrl}/a`],
    });
  });

  it('passes a request through an http proxy as it is: repeated headers, its own proxy-authorization, a 407, a large head', async () => {
    const proxied = { HTTP_PROXY: `http://${proxyUrl}` };
    const repeated = [
      { name: 'x-a', value: '1' },
      { name: 'x-a', value: '2' },
      { name: 'Cookie', value: 'a=1' },
      { name: 'cookie', value: 'b=2' },
    ];
    expect(await through(proxied, 'http://example.invalid/headers', repeated)).toEqual({
      outcome: 'proxied',
      proxySaw: ['GET http://example.invalid/headers', 'x-a: 1', 'x-a: 2', 'cookie: a=1', 'cookie: b=2'],
    });
    const own = [{ name: 'Proxy-Authorization', value: 'Basic b3du' }];
    expect((await through(proxied, 'http://example.invalid/headers', own)).proxySaw).toContain('proxy-authorization: Basic b3du');
    // A user without a password, as `user:`.
    expect((await through({ HTTP_PROXY: `http://user@${proxyUrl}` }, 'http://example.invalid/headers')).proxySaw).toContain(
      'proxy-authorization: Basic dXNlcjo=',
    );
    expect((await through(proxied, 'http://example.invalid/auth')).outcome).toBe('407 proxied');
    expect((await through(proxied, 'http://example.invalid/big-head')).outcome).toBe('proxied');
  });
});
