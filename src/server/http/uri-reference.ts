/**
 * Whether a `location` is a URI reference by RFC 3986's grammar. The
 * references' HTTP client (reqwest) resolves a redirect's `location` by that
 * grammar; over generation 1 it answers the redirect itself when it does not
 * parse: `/a|b`, `/a%zz`, `/a b`, a second `#`, a `:` in a relative path's
 * first segment. Node's URL parser takes all of these, and so does
 * generation 2's reference (`redirect-targets.ts`).
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
const IP_FUTURE = new RegExp(`^v[0-9A-Fa-f]+\\.[${UNRESERVED}${SUB_DELIMS}:]+$`);

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
