/**
 * Version 4 UUIDs from the kernel's random source. `node:crypto` makes the
 * same, but loading it costs milliseconds before the `initialize` answer
 * (`npm run bench -- --only startup`); it is the fallback where
 * /dev/urandom cannot be read.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';

function kernelRandom(length: number): Buffer | undefined {
  const bytes = Buffer.alloc(length);
  try {
    const fd = openSync('/dev/urandom', 'r');
    try {
      return readSync(fd, bytes, 0, length, null) === length ? bytes : undefined;
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

export function randomUuid(): string {
  const bytes = kernelRandom(16);
  if (!bytes) return randomUUID();
  bytes[6] = (bytes[6]! & 0x0f) | 0x40; // version 4
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
