/**
 * Following redirects as the reference's HTTP client (reqwest) does, hop by
 * hop: 301, 302, 303, 307 and 308 with a `location` are followed (a 300 is
 * an answer), at most ten times; 303, and 301/302 after a POST, go on as a
 * GET without the body or its `content-*` headers; credentials and cookies
 * stay behind when the origin changes; each hop says where it came from in
 * `referer` (only the origin across origins, nothing from https to http).
 */
import { Errors } from '../../protocol/errors.js';

const FOLLOWED = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTIONS = 10;
const CROSS_ORIGIN_DROPPED = new Set(['authorization', 'cookie', 'cookie2', 'proxy-authorization', 'www-authenticate']);

export interface Hop {
  method: string;
  url: URL;
  /** Flat [name, value, …], lower-case names. */
  headers: string[];
  body: Buffer | undefined;
}

/** The request that follows `hop`'s redirect to `location`, or throws the reference's error. */
export function nextHop(hop: Hop, status: number, location: string): Hop {
  let url: URL;
  try {
    url = new URL(location, hop.url);
  } catch {
    throw Errors.httpRedirectFailed(hop.url.href);
  }
  const scheme = url.protocol.slice(0, -1);
  if (scheme !== 'http' && scheme !== 'https') throw Errors.httpRedirectScheme(scheme);
  const asGet = status === 303 ? hop.method !== 'HEAD' : (status === 301 || status === 302) && hop.method === 'POST';
  const sameOrigin = url.origin === hop.url.origin;
  const kept: string[] = [];
  for (let index = 0; index < hop.headers.length; index += 2) {
    const name = hop.headers[index]!;
    if (name === 'referer' || (asGet && name.startsWith('content-')) || (!sameOrigin && CROSS_ORIGIN_DROPPED.has(name))) continue;
    kept.push(name, hop.headers[index + 1]!);
  }
  const referer = refererFor(hop.url, url);
  if (referer) kept.push('referer', referer);
  return { method: asGet ? 'GET' : hop.method, url, headers: kept, body: asGet ? undefined : hop.body };
}

function refererFor(from: URL, to: URL): string | undefined {
  if (from.protocol === 'https:' && to.protocol === 'http:') return undefined;
  if (from.origin !== to.origin) return `${from.origin}/`;
  const plain = new URL(from.href);
  plain.hash = '';
  plain.username = '';
  plain.password = '';
  return plain.href;
}

/** Whether a response is a redirect to follow; throws once the ten are spent. */
export function isFollowed(status: number, location: string | undefined, hops: number): location is string {
  if (!FOLLOWED.has(status) || location === undefined) return false;
  if (hops === MAX_REDIRECTIONS) throw Errors.httpTooManyRedirects();
  return true;
}
