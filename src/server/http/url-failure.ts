/**
 * Why a URL with a scheme does not parse, in the words of the references'
 * URL parser (rust-url's `ParseError`), for `http/request url is invalid: …`.
 * Node's URL parser only says that it failed; every such failure of an
 * `http(s)://` URL is in its host or port, which is read here again as
 * rust-url reads it: host first, then port.
 */
import net from 'node:net';

/** The authority of `text` after its scheme: past the slashes, up to the path, query or fragment. */
function authorityOf(text: string): string {
  const afterScheme = text.slice(text.indexOf(':') + 1).replace(/^[/\\]*/, '');
  return afterScheme.split(/[/\\?#]/, 1)[0]!;
}

/** WHATWG's "ends in a number": the host is then read as IPv4. */
function endsInNumber(host: string): boolean {
  const labels = host.split('.');
  const last = labels.at(-1) === '' ? labels.at(-2) : labels.at(-1);
  return last !== undefined && /^(\d+|0[xX][0-9a-fA-F]*)$/.test(last);
}

function hostFailure(host: string): string | undefined {
  if (host === '') return 'empty host';
  // A zone (`%eth0`) is no part of a URL's IPv6 address, though net.isIPv6 takes it.
  if (host.startsWith('['))
    return host.endsWith(']') && !host.includes('%') && net.isIPv6(host.slice(1, -1)) ? undefined : 'invalid IPv6 address';
  if (endsInNumber(host)) return 'invalid IPv4 address';
  return 'invalid international domain name';
}

function portFailure(port: string | undefined): string | undefined {
  if (port === undefined || port === '') return undefined;
  return /^\d+$/.test(port) && Number(port) <= 65_535 ? undefined : 'invalid port number';
}

/** rust-url's reason for refusing `text`, which Node's URL parser refused. */
export function whyUrlFails(text: string): string {
  const authority = authorityOf(text);
  const hostAndPort = authority.slice(authority.lastIndexOf('@') + 1);
  const bracketEnd = hostAndPort.startsWith('[') ? hostAndPort.indexOf(']') : -1;
  if (hostAndPort.startsWith('[') && bracketEnd === -1) return 'invalid IPv6 address';
  const colon = hostAndPort.indexOf(':', bracketEnd + 1);
  const host = colon === -1 ? hostAndPort : hostAndPort.slice(0, colon);
  const port = colon === -1 ? undefined : hostAndPort.slice(colon + 1);
  if (bracketEnd !== -1 && bracketEnd + 1 !== (colon === -1 ? hostAndPort.length : colon)) return 'invalid IPv6 address';
  // A host Node takes fails only with a bad port; one Node refuses is what failed.
  const hostTaken = host !== '' && !host.startsWith('[') && URL.canParse(`http://${host}/`);
  return (hostTaken ? undefined : hostFailure(host)) ?? portFailure(port) ?? 'invalid URL';
}
