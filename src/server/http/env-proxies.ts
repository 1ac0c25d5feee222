/**
 * The proxies named by the server's environment, read as the reference's
 * HTTP client (reqwest, through hyper-util's matcher) reads them:
 * `HTTP_PROXY` / `http_proxy` for http URLs, `HTTPS_PROXY` /
 * `https_proxy` for https URLs, `ALL_PROXY` / `all_proxy` for either when
 * its own names no usable proxy, and `NO_PROXY` / `no_proxy` for the hosts that go
 * direct: domains (each with its subdomains; a leading `.` is the same; `*`
 * is every domain, and `*.x` none), IP addresses and CIDR blocks (no domain
 * entry, `*` included, covers a host given as an address). Loopback is
 * proxied unless listed, and in a CGI script (`REQUEST_METHOD` set, where a
 * request's `Proxy:` header could have set them) none is taken: both as
 * there.
 */
import net, { isIP } from 'node:net';

export interface EnvProxies {
  /** The proxy URL for http URLs, if any. */
  http?: string;
  /** The proxy URL for https URLs, if any. */
  https?: string;
  /** Whether `url` goes direct whatever the proxies. */
  bypasses(url: URL): boolean;
}

/** The first of `names` that is set in `env`, empty or not (an empty one hides the next, as there). */
function first(env: NodeJS.ProcessEnv, names: string[]): string | undefined {
  for (const name of names) if (env[name] !== undefined) return env[name];
  return undefined;
}

/** Proxy schemes a request can go through here (undici's: http, https, SOCKS 5). */
const SCHEMES = new Set(['http:', 'https:', 'socks5:', 'socks:']);

/** A proxy URL as hyper-util takes it (without a scheme, an http proxy), or undefined if it names none usable. */
function usable(value: string | undefined): string | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  try {
    const url = new URL(text.includes('://') ? text : `http://${text}`);
    return SCHEMES.has(url.protocol) ? url.href : undefined;
  } catch {
    return undefined;
  }
}

export function envProxies(env: NodeJS.ProcessEnv): EnvProxies {
  if (env.REQUEST_METHOD !== undefined) return { bypasses: () => true };
  // One that names no usable proxy (empty, not a URL, another scheme) gives way to ALL_PROXY, as there.
  const all = usable(first(env, ['ALL_PROXY', 'all_proxy']));
  const http = usable(first(env, ['HTTP_PROXY', 'http_proxy'])) ?? all;
  const https = usable(first(env, ['HTTPS_PROXY', 'https_proxy'])) ?? all;
  return { http, https, bypasses: noProxyMatcher(first(env, ['NO_PROXY', 'no_proxy']) ?? '') };
}

/** `NO_PROXY`'s list as a test of a URL's host. */
function noProxyMatcher(list: string): (url: URL) => boolean {
  const entries = list
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter(Boolean);
  const addresses = new net.BlockList(); // a class: through the default export, which the bundle loads on first use
  const domains: string[] = [];
  for (const entry of entries) {
    const [address, bits] = entry.split('/');
    const family = isIP(address!) === 6 ? 'ipv6' : 'ipv4';
    try {
      if (isIP(address!) && bits === undefined) addresses.addAddress(address!, family);
      else if (isIP(address!) && /^\d+$/.test(bits!)) addresses.addSubnet(address!, Number(bits), family);
      else domains.push(entry.replace(/^\./, ''));
    } catch {
      // a prefix longer than the address (10.0.0.0/99): it names no host
    }
  }
  return (url) => {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    const family = isIP(host);
    if (family) return addresses.check(host, family === 6 ? 'ipv6' : 'ipv4');
    return domains.some((domain) => domain === '*' || host === domain || host.endsWith(`.${domain}`));
  };
}
