/**
 * Where a redirect leads, and the errors on the way, as each generation's
 * reference has them (both checked side by side: test/http-redirects*.test.ts).
 *
 * Generation 2 (Codex 0.169) follows redirects itself, one request per hop:
 * a `location` that Node's URL parser takes is followed if it is HTTP, and
 * fails naming its scheme otherwise (before too many redirects are counted);
 * a failed hop names its own URL.
 *
 * Generation 1 (Codex 0.134, reqwest) first reads the `location` by RFC 3986
 * (`uri-reference.ts`) and the resolved target as the `http` crate's `Uri`
 * (`http-uri.ts`): a target either refuses is not followed. Too many
 * redirects name the last URL that redirected; then a target that is not
 * HTTP is a "builder error" naming it in `Uri`'s form; a failed send names
 * the URL the request was made for, whichever hop failed.
 */
import { Errors } from '../../protocol/errors.js';
import type { Generation } from '../../protocol/method-spec.js';
import { asHttpUri } from './http-uri.js';
import { MAX_REDIRECTIONS } from './redirects.js';
import { isUriReference } from './uri-reference.js';

export interface RedirectTargets {
  /**
   * Where a redirect from `from` to `location` leads, `followed` redirects
   * into the request made for `original`; undefined when the redirect is the
   * answer. Throws the reference's error when it will not follow it.
   */
  follow(from: URL, location: string, original: URL, followed: number): URL | undefined;
  /** The URL a failed send names. */
  failedUrl(hop: URL, original: URL): string;
}

/** Visible ASCII and tab: a `location` with anything else is the answer in both generations. */
const VISIBLE_ASCII = /^[\t\x20-\x7e]*$/;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
const isHttp = (url: URL) => url.protocol === 'http:' || url.protocol === 'https:';

function parse(location: string, base?: URL): URL | undefined {
  try {
    return new URL(location, base);
  } catch {
    return undefined;
  }
}

/**
 * A `location` Node's URL parser refuses, as both references' HTTP client
 * (reqwest) reads it first: if RFC 3986 resolves it and `Uri` takes that, its
 * own URL parser refuses it after all (a port past 65535, an IPvFuture host,
 * `https:`), a "builder error" naming `named`. Otherwise the redirect is the answer.
 */
function refuseUnparsed(from: URL, location: string, named: URL): undefined {
  if (!isUriReference(location)) return undefined;
  const resolved = SCHEME.test(location) ? location : location.startsWith('//') ? `${from.protocol}${location}` : undefined;
  if (resolved === undefined || asHttpUri(resolved.split('#')[0]!) !== undefined) throw Errors.httpRedirectBuilder(named.href);
  return undefined;
}

const generation2: RedirectTargets = {
  follow(from, location, _original, followed) {
    if (!VISIBLE_ASCII.test(location)) return undefined;
    // Each hop is a request of its own to the reference, so its errors name the hop.
    const url = parse(location, from) ?? refuseUnparsed(from, location, from);
    if (!url) return undefined;
    if (!isHttp(url)) throw Errors.httpRedirectScheme(url.protocol.slice(0, -1));
    if (followed === MAX_REDIRECTIONS) throw Errors.httpTooManyRedirects();
    return url;
  },
  failedUrl: (hop) => hop.href,
};

const generation1: RedirectTargets = {
  follow(from, location, original, followed) {
    if (!VISIBLE_ASCII.test(location) || !isUriReference(location)) return undefined;
    // By RFC 3986 a location with a scheme is absolute, even `http:foo` under an http URL.
    const url = (SCHEME.test(location) ? parse(location) : parse(location, from)) ?? refuseUnparsed(from, location, original);
    if (!url) return undefined;
    url.hash = ''; // a `Uri` has no fragment
    const uri = asHttpUri(url.href);
    if (uri === undefined) return undefined;
    if (followed === MAX_REDIRECTIONS) throw Errors.httpRedirectFollowFailed(from.href);
    if (!isHttp(url)) throw Errors.httpRedirectBuilder(parse(uri)?.href ?? original.href);
    return url;
  },
  failedUrl: (_hop, original) => original.href,
};

export const redirectTargets = (generation: Generation): RedirectTargets => (generation === 2 ? generation2 : generation1);
