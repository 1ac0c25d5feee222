/**
 * Following redirects as the reference's HTTP client (reqwest) does, hop by
 * hop: 301, 302, 303, 307 and 308 with a `location` are followed (a 300 is
 * an answer), at most ten times; a 303 goes on without the body (as a GET
 * unless it was a HEAD), and so does a 301/302 after a POST, both without
 * the headers that described the body; credentials and cookies
 * stay behind when the origin changes; each hop says where it came from in
 * `referer` (nothing from https to http, and across origins only the origin).
 * Which `location`s lead where differs by generation: `redirect-targets.ts`.
 */
const FOLLOWED = new Set([301, 302, 303, 307, 308]);
/** How many redirects a request follows. */
export const MAX_REDIRECTIONS = 10;
const BODY_HEADERS = new Set(['content-type', 'content-length', 'content-encoding', 'transfer-encoding']);
const CROSS_ORIGIN_DROPPED = new Set(['authorization', 'cookie', 'cookie2', 'proxy-authorization', 'www-authenticate']);

export interface Hop {
  method: string;
  url: URL;
  /** Flat [name, value, …], lower-case names. */
  headers: string[];
  body: Buffer | undefined;
}

/** The request that follows `hop`'s redirect to `url` (an HTTP URL: `redirect-targets.ts`). */
export function nextHop(hop: Hop, status: number, url: URL): Hop {
  const withoutBody = status === 303 || ((status === 301 || status === 302) && hop.method === 'POST');
  const method = withoutBody && hop.method !== 'HEAD' ? 'GET' : hop.method;
  const sameOrigin = url.origin === hop.url.origin;
  const kept: string[] = [];
  for (let index = 0; index < hop.headers.length; index += 2) {
    const name = hop.headers[index]!;
    if (name === 'referer' || (withoutBody && BODY_HEADERS.has(name)) || (!sameOrigin && CROSS_ORIGIN_DROPPED.has(name))) continue;
    kept.push(name, hop.headers[index + 1]!);
  }
  const refererValue = refererFor(hop.url, url);
  if (refererValue) kept.push('referer', refererValue);
  return { method, url, headers: kept, body: withoutBody ? undefined : hop.body };
}

/**
 * What a hop's `referer` says: nothing from https to http, the origin only across origins (Codex
 * 0.169's rule; 0.134's reqwest sent the whole URL, its query's tokens too, to the other origin: we
 * do not, over either generation), else the previous URL.
 */
function refererFor(from: URL, to: URL): string | undefined {
  if (from.protocol === 'https:' && to.protocol === 'http:') return undefined;
  if (from.origin !== to.origin) return `${from.origin}/`;
  const plain = new URL(from.href);
  plain.hash = '';
  plain.username = '';
  plain.password = '';
  return plain.href;
}

/** Whether a status is a redirect to follow. */
export const isRedirect = (status: number): boolean => FOLLOWED.has(status);
