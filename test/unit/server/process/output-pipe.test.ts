import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OUTPUT_SLAB_BYTES, OutputPipe, SocketOutput } from '../../../../src/server/process/output-pipe.js';
import { BufferPool } from '../../../../src/transport/buffer-pool.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A FIFO with `data` written into it by a child (`cat`), and our end of it as an OutputPipe. */
function pipeOf(data: Buffer, pool: BufferPool): { pipe: OutputPipe; writerExited: Promise<void> } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'output-pipe-'));
  dirs.push(dir);
  const fifo = path.join(dir, 'fifo');
  const source = path.join(dir, 'source');
  fs.writeFileSync(source, data);
  execFileSync('mkfifo', [fifo]);
  // Non-blocking, as the server opens its ends: the open does not wait for a writer.
  const fd = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  const writer = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', source, fifo], { stdio: 'ignore' });
  const writerExited = new Promise<void>((resolve) => writer.on('exit', () => resolve()));
  return { pipe: new OutputPipe(fd, pool), writerExited };
}

describe('OutputPipe', () => {
  it('delivers every byte in order, each chunk its own memory (later reads do not overwrite kept chunks)', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 12345);
    const pool = new BufferPool(OUTPUT_SLAB_BYTES, 32);
    const { pipe } = pipeOf(data, pool);
    const chunks: Buffer[] = [];
    pipe.onData((chunk) => chunks.push(chunk));
    await pipe.closed;
    expect(chunks.length).toBeGreaterThan(1);
    expect(Buffer.concat(chunks).equals(data)).toBe(true);
    const slabs = chunks.filter((chunk) => chunk.length >= 48 * 1024).map((chunk) => chunk.buffer);
    expect(new Set(slabs).size).toBe(slabs.length);
  });

  it('keeps what arrives before a listener and hands it over, in order, when one is set', async () => {
    const data = randomBytes(40 * 1024);
    const { pipe, writerExited } = pipeOf(data, new BufferPool(OUTPUT_SLAB_BYTES, 32));
    await writerExited;
    // The pipe closes only after its last byte was read: all of it arrived with no listener.
    await pipe.closed;
    const chunks: Buffer[] = [];
    pipe.onData((chunk) => chunks.push(chunk));
    expect(Buffer.concat(chunks).equals(data)).toBe(true);
  });

  it('copies large reads into slabs of the pool, which reuses a slab given back', async () => {
    const data = randomBytes(1024 * 1024);
    const pool = new BufferPool(OUTPUT_SLAB_BYTES, 32);
    const { pipe } = pipeOf(data, pool);
    const chunks: Buffer[] = [];
    pipe.onData((chunk) => chunks.push(chunk));
    await pipe.closed;
    const large = chunks.filter((chunk) => chunk.length >= 48 * 1024);
    expect(large.length).toBeGreaterThan(0);
    for (const chunk of large) expect(chunk.buffer.byteLength).toBe(OUTPUT_SLAB_BYTES);
    pool.give(large[0]!);
    // Compared as a boolean: a failing toBe would print two 64 KiB buffers.
    expect(pool.take(OUTPUT_SLAB_BYTES).buffer === large[0]!.buffer).toBe(true);
  });
});

describe('a read error on a child pipe', () => {
  it('ends the output as EOF does instead of crashing the server', async () => {
    const socket = new net.Socket();
    const output = new SocketOutput(socket);
    // Unheard, this 'error' would be thrown: an uncaught exception in the server.
    socket.destroy(Object.assign(new Error('read EIO'), { code: 'EIO' }));
    await output.closed;
    expect(socket.destroyed).toBe(true);
  });
});
