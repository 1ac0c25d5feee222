/**
 * A URL as the `http` crate's `Uri` reads it. The references' HTTP client
 * (reqwest) checks a redirect target this way before following it: a target
 * `Uri` refuses is not followed (the redirect is the answer), and over
 * generation 1 a target it takes but that is not HTTP fails as a "builder
 * error" naming the target in `Uri`'s form (no fragment, `/` for an empty
 * path). How each generation uses it: `redirect-targets.ts`.
 *
 * `Uri` takes `scheme://authority[path][?query]` (a scheme only with `://`),
 * or, without a scheme, a bare authority and nothing after it.
 */

/** The longest text `Uri` takes. */
const MAX_LENGTH = 65_534;
const MAX_SCHEME_LENGTH = 64;
/** Most colons an authority holds, as in a bracketed IPv6 address with a port. */
const MAX_COLONS = 8;

const SCHEME = /^[A-Za-z0-9+.-]+$/;
/** Bytes an authority may hold besides `%` (which may only be in its userinfo). */
const AUTHORITY = /^[!#$&'()*+,\-./0-9:;=?@A-Z[\]_a-z~]$/;
/** Bytes a path may hold (`"`, `{` and `}` too, as the crate allows for parity with servers). */
const PATH = /^[!"$-;=@-_a-z{|}~]*$/;
/** Bytes a query may hold. */
const QUERY = /^[!$-;=?-~]*$/;

/** `href` in `Uri`'s form, or undefined when `Uri` refuses it. */
export function asHttpUri(href: string): string | undefined {
  if (href.length === 0 || href.length > MAX_LENGTH) return undefined;
  const scheme = schemeOf(href);
  if (scheme === null) return undefined;
  const rest = scheme === undefined ? href : href.slice(scheme.length + 3);
  const authorityEnd = authorityLength(rest);
  if (authorityEnd === undefined) return undefined;
  if (scheme === undefined) return authorityEnd === rest.length ? rest : undefined;
  if (authorityEnd === 0) return undefined;
  const pathAndQuery = withoutFragment(rest.slice(authorityEnd));
  const queryAt = pathAndQuery.indexOf('?');
  const path = queryAt === -1 ? pathAndQuery : pathAndQuery.slice(0, queryAt);
  const query = queryAt === -1 ? undefined : pathAndQuery.slice(queryAt + 1);
  if (!PATH.test(path) || (query !== undefined && !QUERY.test(query))) return undefined;
  const shownScheme = /^https?$/i.test(scheme) ? scheme.toLowerCase() : scheme;
  return `${shownScheme}://${rest.slice(0, authorityEnd)}${path || '/'}${query === undefined ? '' : `?${query}`}`;
}

/** The scheme before `://`; undefined without one; null when it is too long. */
function schemeOf(text: string): string | null | undefined {
  const colon = text.indexOf(':');
  if (colon <= 0 || text.length <= 3 || !SCHEME.test(text.slice(0, colon))) return undefined;
  if (text.slice(colon + 1, colon + 3) !== '//') return undefined;
  return colon > MAX_SCHEME_LENGTH ? null : text.slice(0, colon);
}

/** Where the authority at the start of `text` ends; undefined when `Uri` refuses it. */
function authorityLength(text: string): number | undefined {
  let colons = 0;
  let openBracket = false;
  let closeBracket = false;
  let percent = false;
  let atSign = -1;
  let end = text.length;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (char === '/' || char === '?' || char === '#') {
      end = index;
      break;
    }
    if (char === '%') percent = true;
    else if (!AUTHORITY.test(char)) return undefined;
    else if (char === ':') {
      if (colons >= MAX_COLONS) return undefined;
      colons++;
    } else if (char === '[') {
      if (percent || openBracket) return undefined;
      openBracket = true;
    } else if (char === ']') {
      if (!openBracket || closeBracket) return undefined;
      closeBracket = true;
      colons = 0;
      percent = false;
    } else if (char === '@') {
      atSign = index;
      colons = 0;
      percent = false;
    }
  }
  if (openBracket !== closeBracket || colons > 1 || percent) return undefined;
  if (end > 0 && atSign === end - 1) return undefined;
  return end;
}

function withoutFragment(text: string): string {
  const hash = text.indexOf('#');
  return hash === -1 ? text : text.slice(0, hash);
}
