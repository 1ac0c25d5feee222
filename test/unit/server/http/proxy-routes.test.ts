import type { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { envProxies } from '../../../../src/server/http/env-proxies.js';
import { proxyRoutes } from '../../../../src/server/http/proxy-routes.js';

const direct = { name: 'direct' } as unknown as Dispatcher;
const tunnels: string[] = [];
const tunnel = (uri: string) => {
  tunnels.push(uri);
  return { name: `tunnel ${uri}` } as unknown as Dispatcher;
};

describe('proxyRoutes', () => {
  it('sends an http URL to the proxy in absolute form with its host and the proxy credentials, unless the request has its own', () => {
    const routeFor = proxyRoutes(envProxies({ HTTP_PROXY: 'http://u:p%40@proxy:8080', NO_PROXY: 'direct.example' }), { direct, tunnel });
    expect(routeFor(new URL('http://site.example/a?'), ['x-a', '1', 'x-a', '2'])).toEqual({
      dispatcher: direct,
      origin: 'http://proxy:8080',
      path: 'http://site.example/a?',
      headers: ['host', 'site.example', 'proxy-authorization', `Basic ${Buffer.from('u:p@').toString('base64')}`, 'x-a', '1', 'x-a', '2'],
    });
    const own = routeFor(new URL('http://site.example/'), ['Host', 'h', 'Proxy-Authorization', 'mine']);
    expect(own.headers).toEqual(['Host', 'h', 'Proxy-Authorization', 'mine']);
    expect(routeFor(new URL('http://direct.example/x'), [])).toEqual({
      dispatcher: direct,
      origin: 'http://direct.example',
      path: '/x',
      headers: [],
    });
    // No HTTPS_PROXY: an https URL goes direct.
    expect(routeFor(new URL('https://site.example/'), []).dispatcher).toBe(direct);
  });

  it('tunnels an https URL, its headers one entry per name with every value', () => {
    const routeFor = proxyRoutes(envProxies({ HTTPS_PROXY: 'http://proxy:3128' }), { direct, tunnel });
    const route = routeFor(new URL('https://site.example/p'), ['x-a', '1', 'X-A', '2', 'x-a', '3']);
    expect(route).toMatchObject({ origin: 'https://site.example', path: '/p', headers: { 'x-a': ['1', '3'], 'X-A': ['2'] } });
    expect(tunnels).toContain('http://proxy:3128/');
  });
});
