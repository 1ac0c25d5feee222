/**
 * Request headers that undici, our HTTP client, will not send as given.
 * It refuses some outright (`expect`, `upgrade`, `keep-alive`, a second
 * `host` or `content-length`, a `content-length` a body given does not have), and
 * silently drops a `connection` header, honouring only `close`. The
 * reference sends them all. Rather than a generic "error sending request"
 * after the fact, or a request changed behind the caller's back, such a
 * request is refused before anything is sent, naming the header and why.
 */
import { Errors } from '../../protocol/errors.js';

const UNSUPPORTED = new Set(['expect', 'upgrade', 'keep-alive']);
/** The `connection` tokens undici acts on as asked (it adds `keep-alive` behaviour itself). */
const CONNECTION_TOKENS = new Set(['close', 'keep-alive']);

/** `headers`: lower-case names and values, alternating. A `transfer-encoding: chunked` is handled by `hop-request.ts`. */
export function refuseUnsendable(headers: readonly string[], body: Buffer | undefined): void {
  const seen = new Set<string>();
  for (let at = 0; at < headers.length; at += 2) {
    const name = headers[at]!;
    const value = headers[at + 1]!;
    if (UNSUPPORTED.has(name)) throw Errors.httpHeaderUnsendable(name, 'its HTTP client (undici) does not send it');
    if ((name === 'host' || name === 'content-length') && seen.has(name)) throw Errors.httpHeaderUnsendable(name, 'it is given twice');
    seen.add(name);
    if (name === 'connection' && value.split(',').some((token) => !CONNECTION_TOKENS.has(token.trim().toLowerCase())))
      throw Errors.httpHeaderUnsendable(name, 'only `close` and `keep-alive` can be sent');
    if (name === 'content-length' && !/^\s*\d+\s*$/.test(value)) throw Errors.httpHeaderUnsendable(name, `\`${value}\` is not a length`);
    // Without a body (a GET, a HEAD) undici sends the request all the same.
    if (name === 'content-length' && body !== undefined && body.length > 0 && Number(value) !== body.length)
      throw Errors.httpHeaderUnsendable(name, `the body has ${body.length} bytes`);
    if (name === 'transfer-encoding' && value.trim().toLowerCase() !== 'chunked')
      throw Errors.httpHeaderUnsendable(name, 'only `chunked` can be sent');
  }
}
