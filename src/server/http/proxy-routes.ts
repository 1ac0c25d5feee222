/**
 * Where a hop goes: straight to its origin, or through the proxy the
 * environment names for its scheme (env-proxies.ts), as the reference's
 * HTTP client sends it. An http URL goes to an http proxy as an
 * absolute-form request on our own dispatcher, so the request keeps every
 * header as given (repeats too), our limits, and a 407 is an answer; the
 * proxy's credentials go as `proxy-authorization` unless the request has
 * its own. An https URL goes through a `CONNECT` tunnel (undici's
 * ProxyAgent), its headers as one entry per name with every value, since
 * that agent keeps one value per name of a flat list.
 */
import type { Dispatcher } from 'undici';
import type { EnvProxies } from './env-proxies.js';
import { type Route, requestPath } from './hop-request.js';

export interface Dispatchers {
  direct: Dispatcher;
  /** A tunnelling agent for a proxy URL, or undefined where it cannot be one. */
  tunnel: (proxy: string) => Dispatcher | undefined;
}

const has = (headers: string[], name: string) => headers.some((header, at) => at % 2 === 0 && header.toLowerCase() === name);

/** `headers` (flat name, value pairs) as one entry per name, with every value in order. */
function grouped(headers: string[]): Record<string, string[]> {
  const byName: Record<string, string[]> = Object.create(null);
  for (let at = 0; at < headers.length; at += 2) {
    const name = headers[at]!;
    byName[name] = [...(byName[name] ?? []), headers[at + 1]!];
  }
  return byName;
}

/** `proxy-authorization` for a proxy URL's user and password (either may be empty), as reqwest builds it. */
function proxyAuthorization(proxy: URL): string | undefined {
  if (proxy.username === '' && proxy.password === '') return undefined;
  const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return `Basic ${Buffer.from(credentials).toString('base64')}`;
}

/** A function from a hop's URL and headers to its route, made once per server. */
export function proxyRoutes(proxies: EnvProxies, dispatchers: Dispatchers): (url: URL, headers: string[]) => Route {
  const direct = (url: URL, headers: string[]): Route => ({
    dispatcher: dispatchers.direct,
    origin: url.origin,
    path: requestPath(url),
    headers,
  });
  const httpProxy = proxies.http === undefined ? undefined : new URL(proxies.http); // usable URLs (env-proxies.ts)
  const httpsProxy = proxies.https === undefined ? undefined : new URL(proxies.https);
  const tunnel = httpsProxy && dispatchers.tunnel(httpsProxy.href);
  const socks = httpProxy?.protocol.startsWith('socks') ? dispatchers.tunnel(httpProxy.href) : undefined;
  return (url, headers) => {
    if (proxies.bypasses(url)) return direct(url, headers);
    if (url.protocol === 'https:')
      return tunnel ? { ...direct(url, headers), dispatcher: tunnel, headers: grouped(headers) } : direct(url, headers);
    if (!httpProxy) return direct(url, headers);
    // Through SOCKS, the request goes as to the origin itself.
    if (httpProxy.protocol.startsWith('socks'))
      return socks ? { ...direct(url, headers), dispatcher: socks, headers: grouped(headers) } : direct(url, headers);
    const added: string[] = [];
    if (!has(headers, 'host')) added.push('host', url.host);
    const authorization = proxyAuthorization(httpProxy);
    if (authorization && !has(headers, 'proxy-authorization')) added.push('proxy-authorization', authorization);
    // The target in absolute form, with what requestPath keeps (an empty query).
    return {
      dispatcher: dispatchers.direct,
      origin: httpProxy.origin,
      path: `${url.origin}${requestPath(url)}`,
      headers: [...added, ...headers],
    };
  };
}
