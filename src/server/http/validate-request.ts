/**
 * Checks an `http/request` before anything goes on the network, with the
 * reference's −32602 texts (§5).
 */
import type { Base64Decoder } from '../../protocol/base64.js';
import type { DecodedParamsOf } from '../../protocol/methods.js';
import { refuseUnsendable } from './unsendable-headers.js';
import { Errors } from '../../protocol/errors.js';
import { whyUrlFails } from './url-failure.js';

type Params = DecodedParamsOf<'http/request'>;

/** RFC 9110 token characters. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;

export interface ValidRequest {
  method: string;
  /** Without userinfo, which became an `authorization` header. */
  url: URL;
  /** Flat [name, value, name, value, …], order and duplicates kept. */
  headers: string[];
  body: Buffer | undefined;
}

function isValidHeaderValue(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09) || code === 0x7f || code > 0xff) return false;
  }
  return true;
}

/** A value's UTF-8 bytes, one per character, as undici puts header strings on the wire (the reference sends UTF-8). */
const asWireBytes = (value: string): string => Buffer.from(value, 'utf8').toString('latin1');

/**
 * `user:pass@` in the URL becomes `authorization: Basic …` (percent-decoded,
 * as the reference's client does), and leaves the URL.
 */
function takeUserinfo(url: URL): string[] {
  if (url.username === '' && url.password === '') return [];
  const credentials = `${decodeURIComponentSafe(url.username)}:${decodeURIComponentSafe(url.password)}`;
  url.username = '';
  url.password = '';
  return ['authorization', `Basic ${Buffer.from(credentials).toString('base64')}`];
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** A header's value, continued with its `valueEnvVar` from the server's environment. */
function headerValue(header: { name: string; value: string; valueEnvVar?: string | null }, env: NodeJS.ProcessEnv): string {
  const variable = header.valueEnvVar;
  if (variable === undefined || variable === null) return header.value;
  // No variable's name holds a NUL, but Node's environment would read the name only up to it.
  const fromEnv = !variable.includes('\0') && Object.hasOwn(env, variable) ? env[variable] : undefined;
  if (fromEnv === undefined) throw Errors.httpHeaderEnvMissing(header.name, variable);
  if (fromEnv === '') throw Errors.httpHeaderEnvEmpty(header.name, variable);
  return header.value + fromEnv;
}

/** Checked in the reference's order: the body, the method, the URL, then the headers. */
export function validateRequest(params: Params, decodeBase64: Base64Decoder, env: NodeJS.ProcessEnv): ValidRequest {
  let body: Buffer | undefined;
  if (params.bodyBase64 !== undefined && params.bodyBase64 !== null) {
    const decoded = decodeBase64(params.bodyBase64);
    if (!decoded.ok) throw Errors.invalidParams(decoded.error);
    body = decoded.bytes;
  }
  if (!TOKEN.test(params.method)) throw Errors.httpMethod();
  let url: URL;
  try {
    url = new URL(params.url);
  } catch {
    throw Errors.httpInvalidUrl(SCHEME.test(params.url) ? whyUrlFails(params.url) : 'relative URL without a base');
  }
  const scheme = url.protocol.slice(0, -1);
  if (scheme !== 'http' && scheme !== 'https') throw Errors.httpScheme(scheme);
  const headers = takeUserinfo(url);
  let hasAccept = false;
  for (const header of params.headers ?? []) {
    const name = header.name;
    if (!TOKEN.test(name)) throw Errors.httpHeaderName();
    const value = asWireBytes(headerValue(header, env));
    if (!isValidHeaderValue(value)) throw Errors.httpHeaderValue(name);
    // Names go lower-case, as the reference's HTTP stack sends them.
    const lowered = name.toLowerCase();
    if (lowered === 'accept') hasAccept = true;
    headers.push(lowered, value);
  }
  // The reference sends `accept: */*` unless told otherwise, and no user-agent.
  if (!hasAccept) headers.push('accept', '*/*');
  refuseUnsendable(headers, body);
  return { method: params.method, url, headers, body };
}
