/**
 * Base64 params that were decoded before their request was parsed (see
 * `transport/large-line.ts`). The decoded bytes wait here under a token that
 * takes the string's place in the params; `decodeBase64` hands them over
 * when it meets the token. A token starts with NUL and carries a random
 * secret, so no client can forge one.
 */
import { randomBytes } from 'node:crypto';

const SECRET = `\u0000decoded-payload:${randomBytes(16).toString('hex')}:`;
const payloads = new Map<string, Buffer>();
let next = 0;

/** Keeps `bytes` (valid, already decoded base64) and returns the token that stands for them. */
export function stashPayload(bytes: Buffer): string {
  const token = `${SECRET}${next++}`;
  payloads.set(token, bytes);
  return token;
}

/** The bytes a token stands for (once), or undefined for any other string. */
export function claimPayload(text: string): Buffer | undefined {
  if (text.charCodeAt(0) !== 0 || !text.startsWith(SECRET)) return undefined;
  const bytes = payloads.get(text);
  payloads.delete(text);
  return bytes;
}

/** Drops the bytes of any token among `params`' values that no method claimed. */
export function releasePayloads(params: unknown): void {
  if (payloads.size === 0 || params === null || typeof params !== 'object') return;
  for (const value of Object.values(params)) {
    if (typeof value === 'string' && value.startsWith(SECRET)) payloads.delete(value);
  }
}
