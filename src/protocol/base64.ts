/**
 * Strict standard base64 (RFC 4648 §4, padded), with the reference's error texts.
 *
 * `Buffer.from(s, 'base64')` silently skips junk and accepts missing padding,
 * so a client bug would turn into corrupted bytes on a child's stdin. We
 * validate first and only then let Buffer do the (fast) decoding.
 */

export type Base64Result = { ok: true; bytes: Buffer } | { ok: false; error: string };
/** Decodes a base64 param (a connection's decoder also knows its pre-decoded payloads). */
export type Base64Decoder = (text: string) => Base64Result;

const PAD = 61; // '='

function alphabetValue(code: number): number {
  if (code >= 65 && code <= 90) return code - 65; // A-Z
  if (code >= 97 && code <= 122) return code - 71; // a-z
  if (code >= 48 && code <= 57) return code + 4; // 0-9
  if (code === 43) return 62; // +
  if (code === 47) return 63; // /
  return -1;
}

/** Decodes `text`, or says exactly why it is not canonical base64. */
export function decodeBase64(text: string): Base64Result {
  const bytes = Buffer.from(text, 'base64');
  if (isCanonical(text, bytes)) return { ok: true, bytes };
  return { ok: false, error: findError(text) ?? 'Invalid padding' };
}

/**
 * Fast acceptance for the common, valid case (a 100 MiB payload is 140 M
 * characters; a regex over it overflows V8's regexp stack, a JS loop is
 * slow). Buffer's decoder skips characters outside the alphabet, so any junk
 * shortens the output; it also accepts the URL-safe alphabet, so `-` and `_`
 * are looked for separately, and it reads only the low byte of a non-ASCII
 * character (`\u0144` as `D`), so those are ruled out by the UTF-8 length.
 * Anything unusual goes to the exact slow path.
 */
function isCanonical(text: string, bytes: Buffer): boolean {
  if (text.length % 4 !== 0) return false;
  if (Buffer.byteLength(text, 'utf8') !== text.length) return false;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  if (bytes.length !== (text.length / 4) * 3 - padding) return false;
  if (text.includes('-') || text.includes('_')) return false;
  return lastSymbolError(text) === undefined;
}

/** Encodes bytes as standard padded base64. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

function byteOffset(text: string, index: number): number {
  return Buffer.byteLength(text.slice(0, index), 'utf8');
}

function findError(text: string): string | undefined {
  let firstPad = -1;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (alphabetValue(code) >= 0) {
      if (firstPad >= 0) return invalidSymbol(PAD, byteOffset(text, firstPad));
    } else if (code === PAD) {
      if (firstPad < 0) firstPad = i;
    } else {
      const firstByte = Buffer.from(text.slice(i, i + 2), 'utf8')[0] ?? code;
      return invalidSymbol(firstByte, byteOffset(text, i));
    }
  }
  if (firstPad >= 0) {
    if (firstPad % 4 < 2 || text.length % 4 !== 0) return invalidSymbol(PAD, firstPad);
  } else if (text.length % 4 === 1) {
    return `Invalid input length: ${text.length}`;
  } else if (text.length % 4 !== 0) {
    return 'Invalid padding';
  }
  return lastSymbolError(text);
}

/** Non-zero bits after the last full byte make an encoding non-canonical. */
export function lastSymbolError(text: string): string | undefined {
  const padStart = text.indexOf('=');
  const dataLength = padStart < 0 ? text.length : padStart;
  const remainder = dataLength % 4;
  if (remainder < 2) return undefined;
  const lastIndex = dataLength - 1;
  const code = text.charCodeAt(lastIndex);
  const unusedBits = remainder === 2 ? 0x0f : 0x03;
  if ((alphabetValue(code) & unusedBits) === 0) return undefined;
  return `Invalid last symbol ${code}, offset ${lastIndex}.`;
}

function invalidSymbol(byte: number, offset: number): string {
  return `Invalid symbol ${byte}, offset ${offset}.`;
}
