// The raw limits the servers are compared with: Node itself, no server.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { spawn } from 'node:child_process';
import tty from 'node:tty';
import { MiB, ms, repeat } from './stats.mjs';

/** The raw limit: Node reading `head -c` through a plain pipe. */
export async function rawPipeMiBps(bytes) {
  const started = process.hrtime.bigint();
  const child = spawn('head', ['-c', String(bytes), '/dev/zero'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let total = 0;
  child.stdout.on('data', (chunk) => (total += chunk.length));
  await new Promise((resolve) => child.on('close', resolve));
  return total / MiB / (ms(process.hrtime.bigint() - started) / 1000);
}

/**
 * The raw limit for a terminal: Node reading `head -c` through a PTY with no
 * server (node-pty's native fork, as the server uses it). A terminal hands
 * over at most 4 KiB per read, each passing through a kernel worker.
 */
export async function rawPtyMiBps(bytes) {
  const { native } = createRequire(import.meta.url)('node-pty');
  const started = process.hrtime.bigint();
  let total = 0;
  await new Promise((resolve) => {
    let exited = false;
    let ended = false;
    const forked = native.fork(
      '/usr/bin/head',
      ['-c', String(bytes), '/dev/zero'],
      ['PATH=/usr/bin:/bin'],
      '/',
      80,
      24,
      -1,
      -1,
      false,
      '',
      () => {
        exited = true;
        if (ended || total >= bytes) resolve();
      },
    );
    const reader = new tty.ReadStream(forked.fd);
    reader.on('data', (chunk) => {
      total += chunk.length;
      if (total >= bytes && exited) resolve();
    });
    const end = () => {
      ended = true;
      if (exited) resolve();
    };
    reader.on('error', end); // EIO once the child's side closes
    reader.on('close', end);
  });
  return total / MiB / (ms(process.hrtime.bigint() - started) / 1000);
}

/** The raw limit for files: Node's own fs.readFile / fs.writeFile of 64 MiB. */
export async function rawFileMiBps(scratch, runs) {
  const file = path.join(scratch, 'raw-64m');
  const data = Buffer.alloc(64 * MiB, 7);
  const write = await repeat(runs, async () => {
    const started = process.hrtime.bigint();
    await fs.promises.writeFile(file, data);
    return 64 / (ms(process.hrtime.bigint() - started) / 1000);
  });
  const read = await repeat(runs, async () => {
    const started = process.hrtime.bigint();
    await fs.promises.readFile(file);
    return 64 / (ms(process.hrtime.bigint() - started) / 1000);
  });
  return { read, write };
}
