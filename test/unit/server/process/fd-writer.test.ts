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

  it('drops what the full descriptor has not taken once stopped, and writes nothing after', async () => {
    const { fd, fifo } = nonBlockingFifo();
    const writer = new FdWriter(fd);
    const big = randomBytes(1024 * 1024); // a FIFO takes 64 KiB of it; the rest waits
    writer.write(big);
    writer.stop();
    writer.write(randomBytes(1024));
    const taken = await readFifo(fifo, 64 * 1024);
    expect(taken.equals(big.subarray(0, taken.length))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50)); // a retry would have come by now (every 5 ms)
    // Nothing else reached the FIFO: a read of it finds it empty.
    expect(() => fs.readSync(fd, Buffer.alloc(1))).toThrow(expect.objectContaining({ code: 'EAGAIN' }));
  });

  it("never writes to the descriptor's number once stopped, though the number is reused while the thread pool is busy", async () => {
    // Another thread of this worker may take the freed number first: then the scenario is tried again.
    let reproduced = 0;
    for (let attempt = 0; attempt < 5 && reproduced === 0; attempt++) {
      const outcome = await writeAfterReuse();
      if (outcome === undefined) continue;
      reproduced++;
      expect(outcome).toBe('');
    }
    expect(reproduced).toBe(1);
  });
});

/**
 * Writes through an FdWriter whose descriptor is then stopped and closed, its number given to a
 * new file, while every thread of the pool waits in an open(2) of a FIFO; the new file's content
 * once the pool is free, or undefined if the new file did not get the number.
 */
async function writeAfterReuse(): Promise<string | undefined> {
  const { fd } = nonBlockingFifo();
  const blocker = nonBlockingFifoPath();
  const waiting = Array.from({ length: Number(process.env.UV_THREADPOOL_SIZE ?? 4) }, () => fs.promises.open(blocker, 'r'));
  let release: number | undefined;
  try {
    const writer = new FdWriter(fd);
    writer.write(Buffer.from('meant for the terminal'));
    // As PtyChild.finish does: stop the writer, then the descriptor closes.
    writer.stop();
    opened.splice(opened.indexOf(fd), 1);
    fs.closeSync(fd);
    const reused = path.join(path.dirname(blocker), 'unrelated');
    const other = fs.openSync(reused, 'w');
    opened.push(other);
    // A reader and writer at once, kept until every waiting open is through (one that started late too).
    release = fs.openSync(blocker, fs.constants.O_RDWR | fs.constants.O_NONBLOCK);
    await Promise.all(waiting);
    await fs.promises.stat(reused); // behind anything the pool still had queued
    return other === fd ? fs.readFileSync(reused, 'utf8') : undefined;
  } finally {
    release ??= fs.openSync(blocker, fs.constants.O_RDWR | fs.constants.O_NONBLOCK);
    await Promise.allSettled(waiting.map(async (open) => (await open).close()));
    fs.closeSync(release);
  }
}

/** A FIFO's path, nothing open on it. */
function nonBlockingFifoPath(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fd-writer-'));
  dirs.push(dir);
  const fifo = path.join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  return fifo;
}
