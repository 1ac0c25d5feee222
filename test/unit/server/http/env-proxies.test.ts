import { describe, expect, it } from 'vitest';
import { envProxies } from '../../../../src/server/http/env-proxies.js';

const bypassed = (noProxy: string, url: string) => envProxies({ HTTP_PROXY: 'p:1', NO_PROXY: noProxy }).bypasses(new URL(url));

describe('envProxies', () => {
  it('takes each scheme its own proxy, upper case first, ALL_PROXY where one names none usable, and none in a CGI script', () => {
    expect(envProxies({ HTTP_PROXY: 'h:1', http_proxy: 'l:1', HTTPS_PROXY: 'https://s:2' })).toMatchObject({
      http: 'http://h:1/',
      https: 'https://s:2/',
    });
    expect(envProxies({ http_proxy: ' l:1 ', ALL_PROXY: 'a:3' })).toMatchObject({ http: 'http://l:1/', https: 'http://a:3/' });
    // An empty upper-case one hides the lower-case one; it, another scheme or no URL give way to ALL_PROXY.
    expect(envProxies({ HTTP_PROXY: '', http_proxy: 'l:1', HTTPS_PROXY: 'ftp://f:1', ALL_PROXY: 'a:3' })).toMatchObject({
      http: 'http://a:3/',
      https: 'http://a:3/',
    });
    expect(envProxies({ HTTP_PROXY: 'not a url::', HTTPS_PROXY: 'socks5://s:5' })).toMatchObject({
      http: undefined,
      https: 'socks5://s:5',
    });
    for (const REQUEST_METHOD of ['GET', '']) {
      const cgi = envProxies({ HTTP_PROXY: 'h:1', HTTPS_PROXY: 's:1', REQUEST_METHOD });
      expect([cgi.http, cgi.https, cgi.bypasses(new URL('http://x/'))]).toEqual([undefined, undefined, true]);
    }
  });

  it('reads NO_PROXY as domains with their subdomains, addresses and blocks; * is every domain, no address', () => {
    expect(bypassed('example.com', 'http://a.b.EXAMPLE.com/')).toBe(true);
    expect(bypassed('.example.com', 'http://example.com/')).toBe(true);
    expect(bypassed('example.com', 'http://notexample.com/')).toBe(false);
    expect(bypassed('*.example.com', 'http://a.example.com/')).toBe(false);
    expect(bypassed('10.0.0.0/8, ::1', 'http://10.1.2.3:80/')).toBe(true);
    expect(bypassed('10.0.0.0/8, ::1', 'http://[::1]/')).toBe(true);
    expect(bypassed('10.0.0.0/99, 11.0.0.0/8', 'http://11.0.0.1/')).toBe(true);
    expect(bypassed('*', 'http://any.where/')).toBe(true);
    expect(bypassed('*', 'http://127.0.0.1/')).toBe(false);
    expect(bypassed('', 'http://127.0.0.1/')).toBe(false);
  });
});
