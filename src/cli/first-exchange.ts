/**
 * The CLI's first read of stdin and first write to stdout, before the server
 * is loaded (`main.ts`). What was read is handed on to the server
 * (`serve.ts`), and so is what stdout did not take, so that nothing is lost.
 */
import fs from 'node:fs';

/** The input read before the server was loaded. */
export interface FirstRead {
  /** Every byte read. */
  bytes: Buffer;
  /** The first line, without its newline, when a whole one was read. */
  line: Buffer | undefined;
  /** The input ended after `bytes`: there is no more. */
  ended: boolean;
}

const NEWLINE = 0x0a;

/** The first line's room: an `initialize` is far shorter; a longer line is left to the server. */
const FIRST_LINE_LIMIT = 64 * 1024;

/**
 * Reads `fd` until the first newline, the end of input, `limit` bytes, or a
 * read error (such as a non-blocking descriptor with nothing in it yet: the
 * server's own reading then meets it; Node opens a closed stdin on
 * /dev/null). Plain reads, without the stream machinery that `process.stdin`
 * loads (`npm run bench -- --only startup`); while one is pending, the
 * process cannot exit (libuv waits for its threads), so `main.ts` catches no
 * signal until this has resolved.
 */
export function readFirstLine(fd: number, limit = FIRST_LINE_LIMIT): Promise<FirstRead> {
  const buffer = Buffer.allocUnsafe(limit);
  let filled = 0;
  const result = (ended: boolean): FirstRead => {
    const bytes = buffer.subarray(0, filled);
    const end = bytes.indexOf(NEWLINE);
    return { bytes, line: end === -1 ? undefined : bytes.subarray(0, end), ended };
  };
  return new Promise((resolve) => {
    const next = () =>
      fs.read(fd, buffer, filled, limit - filled, null, (error, read) => {
        if (error) return resolve(result(false));
        if (read === 0) return resolve(result(true));
        const newline = buffer.subarray(filled, filled + read).includes(NEWLINE);
        filled += read;
        if (newline || filled === limit) resolve(result(false));
        else next();
      });
    next();
  });
}

/** Writes what `fd` takes of `bytes` now; returns the rest (all of it when it took nothing). */
export function writeNow(fd: number, bytes: Buffer): Buffer {
  let written = 0;
  try {
    while (written < bytes.length) written += fs.writeSync(fd, bytes, written);
  } catch {
    // full (a non-blocking descriptor) or broken: the server writes the rest, or finds it broken
  }
  return bytes.subarray(written);
}
