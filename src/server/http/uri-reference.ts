/**
 * URI references by RFC 3986, as text: whether a `location` is one, and
 * what it resolves to (section 5.2). The references' HTTP client (reqwest)
 * resolves a redirect's `location` this way, not as Node's URL parser does;
 * over generation 1 it answers the redirect itself when the `location` does
 * not parse: `/a|b`, `/a%zz`, `/a b`, a second `#`, a `:` in a relative
 * path's first segment (`redirect-targets.ts`).
 */
import { isIPv6 } from 'node:net';

const UNRESERVED = 'A-Za-z0-9\\-._~';
const SUB_DELIMS = "!$&'()*+,;=";
const PERCENT = '%[0-9A-Fa-f]{2}';
const PCHAR = `(?:[${UNRESERVED}${SUB_DELIMS}:@]|${PERCENT})`;
const SEGMENT = `${PCHAR}*`;
const SEGMENT_NZ = `${PCHAR}+`;
const SEGMENT_NZ_NC = `(?:[${UNRESERVED}${SUB_DELIMS}@]|${PERCENT})+`;
const USERINFO = `(?:[${UNRESERVED}${SUB_DELIMS}:]|${PERCENT})*`;
const REG_NAME = `(?:[${UNRESERVED}${SUB_DELIMS}]|${PERCENT})*`;
/** An IP literal's brackets are matched loosely here and checked by `validIpLiteral`. */
const AUTHORITY = `(?:${USERINFO}@)?(?<host>\\[[^\\]/?#@]*\\]|${REG_NAME})(?::[0-9]*)?`;
const PATH_ABEMPTY = `(?:/${SEGMENT})*`;
const PATH_ABSOLUTE = `/(?:${SEGMENT_NZ}(?:/${SEGMENT})*)?`;
const TAIL = `(?:\\?(?:${PCHAR}|[/?])*)?(?:#(?:${PCHAR}|[/?])*)?`;

const ABSOLUTE = new RegExp(
  `^[A-Za-z][A-Za-z0-9+.-]*:(?://${AUTHORITY}${PATH_ABEMPTY}|${PATH_ABSOLUTE}|${SEGMENT_NZ}(?:/${SEGMENT})*|)${TAIL}$`,
);
const RELATIVE = new RegExp(`^(?://${AUTHORITY}${PATH_ABEMPTY}|${PATH_ABSOLUTE}|${SEGMENT_NZ_NC}(?:/${SEGMENT})*|)${TAIL}$`);
const IP_FUTURE = new RegExp(`^[vV][0-9A-Fa-f]+\\.[${UNRESERVED}${SUB_DELIMS}:]+$`);

/** Whether `text` is an RFC 3986 URI reference (an absolute URI or a relative one). */
export function isUriReference(text: string): boolean {
  const match = ABSOLUTE.exec(text) ?? RELATIVE.exec(text);
  return match !== null && validIpLiteral(match.groups?.host);
}

function validIpLiteral(host: string | undefined): boolean {
  if (!host?.startsWith('[')) return true;
  const inside = host.slice(1, -1);
  return IP_FUTURE.test(inside) || (!inside.includes('%') && isIPv6(inside));
}

/** Appendix B's split into scheme, authority, path, query and fragment (undefined where absent). */
const PARTS = /^(?:([^:/?#]+):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/s;

interface Parts {
  scheme?: string;
  authority?: string;
  path: string;
  query?: string;
  fragment?: string;
}

function split(text: string): Parts {
  const [, scheme, authority, path = '', query, fragment] = PARTS.exec(text)!;
  return { scheme, authority, path, query, fragment };
}

/** `reference` resolved against `base` (an absolute URI) as RFC 3986 section 5.2.2 does, as text. */
export function resolveReference(base: string, reference: string): string {
  const b = split(base);
  const r = split(reference);
  const target: Parts = { path: '', fragment: r.fragment };
  if (r.scheme !== undefined) {
    Object.assign(target, { scheme: r.scheme, authority: r.authority, path: removeDotSegments(r.path), query: r.query });
  } else if (r.authority !== undefined) {
    Object.assign(target, { scheme: b.scheme, authority: r.authority, path: removeDotSegments(r.path), query: r.query });
  } else if (r.path === '') {
    Object.assign(target, { scheme: b.scheme, authority: b.authority, path: b.path, query: r.query ?? b.query });
  } else {
    const path = r.path.startsWith('/') ? r.path : merge(b, r.path);
    Object.assign(target, { scheme: b.scheme, authority: b.authority, path: removeDotSegments(path), query: r.query });
  }
  return recompose(target);
}

function merge(base: Parts, path: string): string {
  if (base.authority !== undefined && base.path === '') return `/${path}`;
  return base.path.slice(0, base.path.lastIndexOf('/') + 1) + path;
}

/** Section 5.2.4. */
function removeDotSegments(path: string): string {
  let input = path;
  let output = '';
  while (input !== '') {
    if (input.startsWith('../')) input = input.slice(3);
    else if (input.startsWith('./')) input = input.slice(2);
    else if (input.startsWith('/./')) input = input.slice(2);
    else if (input === '/.') input = '/';
    else if (input.startsWith('/../') || input === '/..') {
      input = `/${input.slice(input === '/..' ? 3 : 4)}`;
      output = output.slice(0, Math.max(0, output.lastIndexOf('/')));
    } else if (input === '.' || input === '..') input = '';
    else {
      const end = input.indexOf('/', input.startsWith('/') ? 1 : 0);
      const segment = end === -1 ? input : input.slice(0, end);
      output += segment;
      input = input.slice(segment.length);
    }
  }
  return output;
}

function recompose({ scheme, authority, path, query, fragment }: Parts): string {
  return `${scheme === undefined ? '' : `${scheme}:`}${authority === undefined ? '' : `//${authority}`}${path}${query === undefined ? '' : `?${query}`}${fragment === undefined ? '' : `#${fragment}`}`;
}
