/**
 * Where a redirect leads, and the errors on the way, as each generation's
 * reference has them (both checked side by side: test/http-redirects*.test.ts).
 *
 * Both references' HTTP client (reqwest) first resolves the `location` by
 * RFC 3986 (`uri-reference.ts`) and reads the target as the `http` crate's
 * `Uri` (`http-uri.ts`), then through its URL parser.
 *
 * Generation 1 (Codex 0.134) follows that: a target RFC 3986 or `Uri`
 * refuses is not followed; one its URL parser refuses is a "builder error"
 * naming the URL asked for. Too many redirects name the last URL that
 * redirected; then a target that is not HTTP is a builder error naming it;
 * a failed send names the URL asked for, whichever hop failed.
 *
 * Generation 2 (Codex 0.169) has reqwest hand every redirect back (after the
 * URL parser's check, naming the hop) and follows it itself, one request per
 * hop: a `location` Node's URL parser takes is followed if it is HTTP, and
 * fails naming its scheme otherwise, before too many redirects are counted;
 * a hop's URL that is no `Uri` fails its request; a failed hop names its URL.
 */
import { Errors } from '../../protocol/errors.js';
import type { Generation } from '../../protocol/method-spec.js';
import { isHeaderText } from './header-text.js';
import { asHttpUri } from './http-uri.js';
import { MAX_REDIRECTIONS } from './redirects.js';
import { isUriReference, resolveReference } from './uri-reference.js';

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

const isHttp = (url: URL) => url.protocol === 'http:' || url.protocol === 'https:';

function parse(location: string, base?: URL): URL | undefined {
  try {
    return new URL(location, base);
  } catch {
    return undefined;
  }
}

/**
 * The target as reqwest's redirect layer reads `location`: resolved by RFC
 * 3986 and read as a `Uri` (undefined when either refuses it); `url` is that
 * `Uri` through its URL parser (undefined when it refuses it).
 */
function reqwestTarget(from: URL, location: string): { uri: string; url: URL | undefined } | undefined {
  if (!isUriReference(location)) return undefined;
  const uri = asHttpUri(resolveReference(from.href, location));
  return uri === undefined ? undefined : { uri, url: parse(uri) };
}

/** A header value without the blanks around it, as the references' HTTP parser hands it over. */
const trimmed = (value: string) => value.replace(/^[\t ]+|[\t ]+$/g, '');

const generation2: RedirectTargets = {
  follow(from, location, _original, followed) {
    const text = trimmed(location);
    if (!isHeaderText(text)) return undefined;
    // reqwest's redirect layer reads it first, then hands the redirect back to the reference's own
    // loop; what it cannot parse fails there. Each hop is a request of its own, named by its URL.
    const early = reqwestTarget(from, text);
    if (early && !early.url) throw Errors.httpRedirectBuilder(from.href);
    const url = parse(text, from);
    if (!url) return undefined;
    if (!isHttp(url)) throw Errors.httpRedirectScheme(url.protocol.slice(0, -1));
    if (followed === MAX_REDIRECTIONS) throw Errors.httpTooManyRedirects();
    // The next hop's request refuses a URL that is no `Uri` (`{` in a host, 64 KiB of path).
    if (asHttpUri(url.href) === undefined) throw Errors.httpRedirectBuilder(url.href);
    return url;
  },
  failedUrl: (hop) => hop.href,
};

const generation1: RedirectTargets = {
  follow(from, location, original, followed) {
    const text = trimmed(location);
    const target = isHeaderText(text) ? reqwestTarget(from, text) : undefined;
    if (!target) return undefined;
    if (!target.url) throw Errors.httpRedirectBuilder(original.href);
    if (followed === MAX_REDIRECTIONS) throw Errors.httpRedirectFollowFailed(from.href);
    if (!isHttp(target.url)) throw Errors.httpRedirectBuilder(target.url.href);
    return target.url;
  },
  failedUrl: (_hop, original) => original.href,
};

export const redirectTargets = (generation: Generation): RedirectTargets => (generation === 2 ? generation2 : generation1);
