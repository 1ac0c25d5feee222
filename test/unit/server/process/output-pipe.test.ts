import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OutputPipe, READ_BUFFER, SocketOutput } from '../../../../src/server/process/output-pipe.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A FIFO with `data` written into it by a child (`cat`), and our end of it as an OutputPipe. */
function pipeOf(data: Buffer): { pipe: OutputPipe; writerExited: Promise<void> } {
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
  return { pipe: new OutputPipe(fd), writerExited };
}

describe('OutputPipe', () => {
  it('delivers every byte in order, each read lent in the one shared buffer (no buffer made per read)', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 12345);
    const { pipe } = pipeOf(data);
    const copies: Buffer[] = [];
    let lentElsewhere = 0;
    pipe.onData((chunk) => {
      if (chunk.buffer !== READ_BUFFER.buffer || chunk.byteOffset !== READ_BUFFER.byteOffset) lentElsewhere++;
      copies.push(Buffer.from(chunk));
    });
    await pipe.closed;
    expect(copies.length).toBeGreaterThan(1);
    expect(lentElsewhere).toBe(0);
    expect(Buffer.concat(copies).equals(data)).toBe(true);
  });

  it('keeps what arrives before a listener and hands it over, in order, when one is set', async () => {
    // Several reads' worth: each early one must have been kept as a copy, not as the shared buffer.
    const data = randomBytes(300 * 1024);
    const { pipe, writerExited } = pipeOf(data);
    await writerExited;
    // The pipe closes only after its last byte was read: all of it arrived with no listener.
    await pipe.closed;
    const chunks: Buffer[] = [];
    pipe.onData((chunk) => chunks.push(chunk));
    expect(Buffer.concat(chunks).equals(data)).toBe(true);
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
