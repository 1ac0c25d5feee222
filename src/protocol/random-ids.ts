/**
 * Random ids (sessions, processes, handles, markers) from the kernel's
 * random source. `node:crypto` gives the same, but loading it costs
 * milliseconds before the first answer or the first spawn
 * (`npm run bench -- --only startup`); it is the fallback where
 * /dev/urandom cannot be read.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';

/** `length` random bytes. */
function randomBytesOf(length: number): Buffer {
  const bytes = Buffer.alloc(length);
  try {
    const fd = openSync('/dev/urandom', 'r');
    try {
      if (readSync(fd, bytes, 0, length, null) === length) return bytes;
    } finally {
      closeSync(fd);
    }
  } catch {
    // no /dev/urandom here
  }
  return randomBytes(length);
}

/** `2 * bytes` random hex digits. */
export function randomHex(bytes: number): string {
  return randomBytesOf(bytes).toString('hex');
}

/** A version 4 UUID. */
export function randomUuid(): string {
  const bytes = randomBytesOf(16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40; // version 4
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
