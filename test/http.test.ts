import net, { type AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerProcess } from './support/server-process.js';
import { req, type SeenRequest, startTestOrigin, type TestOrigin, text } from './support/test-origin.js';

let server: ServerProcess;
let origin: TestOrigin;
let base: string;
let seen: SeenRequest[];

beforeAll(async () => {
  origin = await startTestOrigin();
  ({ base, seen } = origin);
  server = await ServerProcess.started();
});
afterAll(async () => {
  await server.dispose();
  await origin.close();
});

describe('http/request buffered (§5)', () => {
  it('returns status, lower-case headers in order with duplicates, and the body', async () => {
    const result = await server.request('http/request', req({ url: `${base}/hello` }));
    expect(result.status).toBe(200);
    expect(text(result.bodyBase64)).toBe('hello');
    const cookies = result.headers.filter((h: any) => h.name === 'set-cookie').map((h: any) => h.value);
    expect(cookies).toEqual(['a=1', 'b=2']);
    expect(result.headers.find((h: any) => h.name === 'x-custom')).toEqual({ name: 'x-custom', value: 'v' });
  });

  it('sends method, ordered duplicate headers, accept */* and the body', async () => {
    await server.request(
      'http/request',
      req({
        method: 'PUT',
        url: `${base}/echo`,
        headers: [
          { name: 'X-Dup', value: '1' },
          { name: 'X-Other', value: 'o' },
          { name: 'x-dup', value: '2' },
        ],
        bodyBase64: Buffer.from('payload').toString('base64'),
      }),
    );
    const last = seen.at(-1)!;
    expect(last.method).toBe('PUT');
    expect(last.body).toBe('payload');
    const names = last.rawHeaders.filter((_, i) => i % 2 === 0);
    // Lower-case, as the reference sends them.
    expect(names.filter((n) => /^x-/i.test(n))).toEqual(['x-dup', 'x-other', 'x-dup']);
    expect(last.rawHeaders).toContain('*/*');
    expect(names.map((n) => n.toLowerCase())).not.toContain('user-agent');
  });

  it('treats non-2xx as results, follows redirects, keeps gzip bodies raw, handles 204 and 3 MiB', async () => {
    expect((await server.request('http/request', req({ url: `${base}/missing` }))).status).toBe(404);
    const redirected = await server.request('http/request', req({ url: `${base}/redirect` }));
    expect([redirected.status, text(redirected.bodyBase64)]).toEqual([200, 'hello']);
    const gzip = await server.request('http/request', req({ url: `${base}/gzip` }));
    expect(zlib.gunzipSync(Buffer.from(gzip.bodyBase64, 'base64')).toString()).toBe('compressed');
    expect(gzip.headers).toContainEqual({ name: 'content-encoding', value: 'gzip' });
    expect(await server.request('http/request', req({ url: `${base}/empty` }))).toMatchObject({ status: 204, bodyBase64: '' });
    expect(Buffer.from((await server.request('http/request', req({ url: `${base}/big` }))).bodyBase64, 'base64').length).toBe(
      3 * 1024 * 1024,
    );
  });

  it('stops at a redirect with redirectPolicy "stop" (generation 2) and follows it with "follow"', async () => {
    const stopped = await server.request('http/request', req({ url: `${base}/redirect`, redirectPolicy: 'stop' }));
    expect(stopped).toMatchObject({ status: 302, bodyBase64: '' });
    expect(stopped.headers).toContainEqual({ name: 'location', value: '/hello' });
    const followed = await server.request('http/request', req({ url: `${base}/redirect`, redirectPolicy: 'follow' }));
    expect([followed.status, text(followed.bodyBase64)]).toEqual([200, 'hello']);
    expect(await server.error('http/request', req({ url: `${base}/redirect`, redirectPolicy: 'never' }))).toEqual({
      code: -32602,
      message: 'redirectPolicy: unknown variant `never`, expected `follow` or `stop`',
    });
  });

  it('fills a header from the server environment with valueEnvVar (generation 2), or refuses before sending', async () => {
    const local = await ServerProcess.started([], { ...process.env, HDR_SECRET: 'secret-value', HDR_EMPTY: '' });
    try {
      const header = (valueEnvVar: string, value = 'Bearer ') =>
        req({ url: `${base}/hello`, headers: [{ name: 'authorization', value, valueEnvVar }] });
      const before = seen.length;
      expect((await local.request('http/request', header('HDR_SECRET'))).status).toBe(200);
      const sent = seen.at(-1)!.rawHeaders;
      expect(sent[sent.findIndex((h) => h.toLowerCase() === 'authorization') + 1]).toBe('Bearer secret-value');
      expect(await local.error('http/request', header('HDR_MISSING'))).toEqual({
        code: -32602,
        message: 'http/request header authorization requires executor environment variable HDR_MISSING',
      });
      expect(await local.error('http/request', header('HDR_EMPTY'))).toEqual({
        code: -32602,
        message: 'http/request header authorization requires a non-empty executor environment variable HDR_EMPTY',
      });
      expect(seen.length).toBe(before + 1); // the refused requests never reached the network
    } finally {
      await local.dispose();
    }
  });

  it('validates before sending, with the reference texts', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ url: '/relative' }, 'http/request url is invalid: relative URL without a base'],
      [{ url: 'ftp://127.0.0.1/' }, 'http/request only supports http and https URLs, got ftp'],
      [{ url: base, method: 'BAD METHOD' }, 'http/request method is invalid: invalid HTTP method'],
      [{ url: base, headers: [{ name: 'bad name', value: 'x' }] }, 'http/request header name is invalid: invalid HTTP header name'],
      [
        { url: base, headers: [{ name: 'X-A', value: 'a\nb' }] },
        'http/request header value is invalid for X-A: failed to parse header value',
      ],
      [{ url: base, headers: { a: 'b' } }, 'headers: invalid type: map, expected a sequence'],
      [{ url: base, bodyBase64: 'a' }, 'Invalid input length: 1'],
      // Two faults: the reference checks the body, then the method, then the URL, then the headers.
      [{ url: '/relative', bodyBase64: '!!' }, 'Invalid symbol 33, offset 0.'],
      [{ url: 'ftp://x/', method: 'bad method' }, 'http/request method is invalid: invalid HTTP method'],
      [{ url: 'ftp://x/', headers: [{ name: 'bad name', value: 'x' }] }, 'http/request only supports http and https URLs, got ftp'],
      // What failed in a URL, in the reference's words (both generations).
      ...(
        [
          ['http://', 'empty host'],
          ['http://user@:80/', 'empty host'],
          ['http://127.0.0.1:99999/', 'invalid port number'],
          ['http://a:b/', 'invalid port number'],
          ['http://[::1]:x/', 'invalid port number'],
          ['http://[::1/echo', 'invalid IPv6 address'],
          ['https://[zz]/', 'invalid IPv6 address'],
          ['http://[fe80::1%25eth0]/', 'invalid IPv6 address'],
          ['http://1.2.3.256/', 'invalid IPv4 address'],
          ['http://0x100000000/', 'invalid IPv4 address'],
          ['http://exa mple.com/', 'invalid international domain name'],
          ['http://x%/', 'invalid international domain name'],
          ['http://xn--a/', 'invalid international domain name'],
        ] as const
      ).map(([url, why]): [Record<string, unknown>, string] => [{ url }, `http/request url is invalid: ${why}`]),
    ];
    for (const [params, message] of cases) {
      expect(await server.error('http/request', req(params))).toEqual({ code: -32602, message });
    }
  });

  it('refuses, before sending, headers its HTTP client would refuse or drop, naming the header; sends the forms it can', async () => {
    const hello = Buffer.from('hello').toString('base64');
    const cases: Array<[Array<{ name: string; value: string }>, string | undefined, string]> = [
      [
        [{ name: 'Expect', value: '100-continue' }],
        hello,
        'expect cannot be sent by this exec-server: its HTTP client (undici) does not send it',
      ],
      [
        [{ name: 'upgrade', value: 'websocket' }],
        undefined,
        'upgrade cannot be sent by this exec-server: its HTTP client (undici) does not send it',
      ],
      [
        [{ name: 'keep-alive', value: 'timeout=5' }],
        undefined,
        'keep-alive cannot be sent by this exec-server: its HTTP client (undici) does not send it',
      ],
      [
        [{ name: 'connection', value: 'keep-alive, x-foo' }],
        undefined,
        'connection cannot be sent by this exec-server: only `close` and `keep-alive` can be sent',
      ],
      [
        [
          { name: 'host', value: 'a' },
          { name: 'Host', value: 'b' },
        ],
        undefined,
        'host cannot be sent by this exec-server: it is given twice',
      ],
      [[{ name: 'content-length', value: '3' }], hello, 'content-length cannot be sent by this exec-server: the body has 5 bytes'],
      [[{ name: 'content-length', value: 'abc' }], hello, 'content-length cannot be sent by this exec-server: `abc` is not a length'],
      [
        [{ name: 'transfer-encoding', value: 'gzip' }],
        hello,
        'transfer-encoding cannot be sent by this exec-server: only `chunked` can be sent',
      ],
    ];
    const before = seen.length;
    for (const [headers, bodyBase64, why] of cases) {
      const params = req({ method: 'POST', url: `${base}/echo`, headers, ...(bodyBase64 ? { bodyBase64 } : {}) });
      expect(await server.error('http/request', params)).toEqual({ code: -32602, message: `http/request header ${why}` });
    }
    expect(seen.length).toBe(before); // nothing reached the network
    const sendable = [
      { name: 'content-length', value: '5' },
      { name: 'connection', value: 'close' },
    ];
    const sent = await server.request('http/request', req({ method: 'POST', url: `${base}/echo`, headers: sendable, bodyBase64: hello }));
    expect(sent.status).toBe(200);
    expect(seen.at(-1)).toMatchObject({ body: 'hello' });
    // Without a body, a content-length goes as undici sends it (a HEAD's may name the entity's size).
    const head = await server.request(
      'http/request',
      req({ method: 'HEAD', url: `${base}/echo`, headers: [{ name: 'content-length', value: '10' }] }),
    );
    expect(head.status).toBe(200);
  });

  it('takes redirectPolicy as a sign of generation 2, whose timeoutMs 0 fails before sending', async () => {
    const fresh = await ServerProcess.started();
    try {
      expect(await fresh.error('http/request', req({ url: `${base}/hello`, timeoutMs: 0, redirectPolicy: 'follow' }))).toEqual({
        code: -32603,
        message: 'http/request failed: route-aware request timed out',
      });
    } finally {
      await fresh.dispose();
    }
  });

  it('fails transport errors and timeouts with -32603', async () => {
    const refused = 'http://127.0.0.1:1/';
    expect(await server.error('http/request', req({ url: refused }))).toEqual({
      code: -32603,
      message: `http/request failed: error sending request for url (${refused})`,
    });
    expect((await server.error('http/request', req({ url: `${base}/hello`, timeoutMs: 0 }))).code).toBe(-32603);
    expect((await server.error('http/request', req({ url: `${base}/slow-head`, timeoutMs: 200 }))).message).toBe(
      `http/request failed: error sending request for url (${base}/slow-head)`,
    );
    // The head must come within the timeout for the body to be what times out: a roomy one, for a loaded machine.
    expect(await server.error('http/request', req({ url: `${base}/stalled-body`, timeoutMs: 2000 }))).toEqual({
      code: -32603,
      message: 'failed to read http/request response body: error decoding response body',
    });
  });

  it('answers at timeoutMs while a TLS handshake hangs (undici alone waited for its 10 s connect timeout)', async () => {
    const silent = net.createServer((socket) => socket.on('error', () => undefined));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
    try {
      const started = Date.now();
      expect(await server.error('http/request', req({ url, timeoutMs: 500 }))).toEqual({
        code: -32603,
        message: `http/request failed: error sending request for url (${url})`,
      });
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      silent.close();
    }
  });

  it('does not block other requests while a slow request is pending (EXT-CONCURRENCY)', async () => {
    let slowAnswered = false;
    const slow = server.call('http/request', req({ url: `${base}/slow-head` })).finally(() => (slowAnswered = true));
    await server.request('fs/getMetadata', { path: '/tmp' });
    expect(slowAnswered).toBe(false); // answered first, though sent after: the origin holds its head for 2 s
    expect(text((await slow).result.bodyBase64)).toBe('late');
  });
});
