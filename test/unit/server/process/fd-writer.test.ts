import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FdWriter } from '../../../../src/server/process/fd-writer.js';

const opened: number[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const fd of opened.splice(0)) fs.closeSync(fd);
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A FIFO's non-blocking write end (a full FIFO answers EAGAIN, as a full terminal does), and its path. */
function nonBlockingFifo(): { fd: number; fifo: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fd-writer-'));
  dirs.push(dir);
  const fifo = path.join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const fd = fs.openSync(fifo, fs.constants.O_RDWR | fs.constants.O_NONBLOCK);
  opened.push(fd);
  return { fd, fifo };
}

/** The first `length` bytes a reader of the FIFO gets. */
function readFifo(fifo: string, length: number): Promise<Buffer> {
  const reader = spawn('head', ['-c', String(length), fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
  const chunks: Buffer[] = [];
  reader.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve) => reader.on('close', () => resolve(Buffer.concat(chunks))));
}

describe('FdWriter', () => {
  it('writes every queued buffer in order through a descriptor that fills up (EAGAIN)', async () => {
    const { fd, fifo } = nonBlockingFifo();
    const writer = new FdWriter(fd);
    // Sixteen times a FIFO's 64 KiB: most of it waits for the reader.
    const parts = Array.from({ length: 32 }, () => randomBytes(32 * 1024));
    for (const part of parts) writer.write(part);
    writer.write(Buffer.alloc(0));
    const expected = Buffer.concat(parts);
    expect((await readFifo(fifo, expected.length)).equals(expected)).toBe(true);
  });

  it('drops what is queued once stopped, and writes nothing after', async () => {
    const { fd, fifo } = nonBlockingFifo();
    const writer = new FdWriter(fd);
    const first = randomBytes(1024);
    writer.write(first);
    writer.write(randomBytes(1024 * 1024)); // queued behind the first write in flight
    writer.stop();
    writer.write(randomBytes(1024));
    expect((await readFifo(fifo, first.length)).equals(first)).toBe(true);
    // Nothing else reached the FIFO: a read of it finds it empty.
    expect(() => fs.readSync(fd, Buffer.alloc(1))).toThrow(expect.objectContaining({ code: 'EAGAIN' }));
  });
});
