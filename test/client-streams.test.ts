/**
 * A session's output as streams and listeners, and `run`'s input on a PTY:
 * what reaches each consumer, in which order, and what a lost server does to
 * them (nothing that brings down the host).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecServerClient } from '../src/index.js';
import { bodyServer, closeLoopback, listenLoopback } from './support/loopback.js';

const FAKE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'support/fake-server.mjs');
const fake = (scenario: string) => ({ command: process.execPath, args: [FAKE, scenario], initializeTimeoutMs: 5000 });

/** A Writable that keeps what it is given. */
function sink(): Writable & { text: () => string } {
  const chunks: Buffer[] = [];
  const writable = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      callback();
    },
  });
  return Object.assign(writable, { text: () => Buffer.concat(chunks).toString() });
}

describe('against the real server', () => {
  let client: ExecServerClient;
  beforeAll(async () => {
    client = await ExecServerClient.spawn({ clientName: 'streams-test' });
  });
  afterAll(async () => {
    await client.close();
  });

  it("ends a PTY command's input whether or not it ends a line", async () => {
    for (const [input, count] of [
      ['abc', '3'],
      ['abc\n', '4'],
      ['', '0'],
    ] as const) {
      const counted = await client.run(['wc', '-c'], { stdin: input, tty: true, timeoutMs: 5000 });
      expect(counted.timedOut, JSON.stringify(input)).toBe(false);
      // The terminal echoes the input; wc prints its count last.
      expect(/(\d+)\s*$/.exec(counted.output.toString())?.[1], JSON.stringify(input)).toBe(count);
    }
  });
});

describe('against scripted servers', () => {
  it('hands output that came before start() resolved to stdout and to stderr alike', async () => {
    const client = await ExecServerClient.spawn(fake('early-both'));
    try {
      const session = await client.start({ argv: ['x'], processId: 'p' });
      const [out, err] = [sink(), sink()];
      await Promise.all([pipeline(session.stdout, out), pipeline(session.stderr, err)]);
      expect([out.text(), err.text()]).toEqual(['OUT\n', 'ERR\n']);
    } finally {
      await client.close();
    }
  });

  it('ends a piped stream when the server is lost (an error there would bring down the host), and errors one with a listener', async () => {
    for (const consumer of ['pipe', 'pipeline'] as const) {
      const client = await ExecServerClient.spawn(fake('disconnect-after-start'));
      try {
        const session = await client.start({ argv: ['x'], processId: 'p' });
        const out = sink();
        if (consumer === 'pipe') {
          session.stdout.pipe(out);
          await new Promise((resolve) => out.on('finish', resolve));
        } else {
          await expect(pipeline(session.stdout, out)).rejects.toThrow(/disconnected/);
        }
        expect(out.text(), consumer).toBe('partial');
        await expect(session.wait()).rejects.toThrow(/disconnected/);
      } finally {
        await client.close();
      }
    }
  });

  it('gives a listener attached from inside another listener its backlog before the events that follow it', async () => {
    const client = await ExecServerClient.spawn(fake('pair'));
    try {
      const a = await client.start({ argv: ['x'], processId: 'a' });
      const b = await client.start({ argv: ['x'], processId: 'b' });
      const seen: string[] = [];
      let secondOfB!: () => void;
      const done = new Promise<void>((resolve) => {
        secondOfB = resolve;
      });
      a.on('output', (event) => {
        seen.push(`a${event.seq}`);
        b.on('output', (later) => {
          seen.push(`b${later.seq}`);
          if (later.seq === 2) secondOfB();
        });
      });
      await client.request('test/emitPair', { a: 'a', b: 'b' }); // one write: b#1, a#1, b#2
      await done;
      expect(seen).toEqual(['a1', 'b1', 'b2']);
    } finally {
      await client.close();
    }
  });
});

describe('a server that breaks the sequence or the protocol', () => {
  it('reads what a closed process never sent, and fails a session whose output the server lost, instead of hanging', async () => {
    const found = await ExecServerClient.spawn(fake('gap'));
    try {
      const session = await found.start({ argv: ['x'], processId: 'p' });
      const out = sink();
      await pipeline(session.stdout, out);
      expect(out.text()).toBe('abc');
      expect(await session.wait()).toBe(0);
    } finally {
      await found.close();
    }
    const lost = await ExecServerClient.spawn(fake('gap-lost'));
    try {
      const session = await lost.start({ argv: ['x'], processId: 'p' });
      await expect(session.wait()).rejects.toThrow('output seq 2..2 was lost: it never arrived, and the server no longer keeps it');
    } finally {
      await lost.close();
    }
  });

  it.each([
    ['a fractional seq', 'fractional-seq', 'process/output'],
    ['a seq of 0', 'zero-seq', 'process/output'],
    ['a fractional exit code', 'fractional-exit', 'process/exited'],
  ])('takes %s for a protocol violation, not an event to drop or pass on', async (_what, scenario, method) => {
    const client = await ExecServerClient.spawn(fake(scenario));
    try {
      const session = await client.start({ argv: ['x'], processId: 'p' });
      await expect(session.wait()).rejects.toThrow(`protocol violation: exec-server sent a ${method} notification it cannot have meant`);
    } finally {
      await client.close();
    }
  });

  it('takes a server that dies in the middle of a line for a server gone, not for one breaking the protocol', async () => {
    await expect(ExecServerClient.spawn(fake('dies-mid-answer'))).rejects.toMatchObject({
      kind: 'serverExited',
      message: expect.stringMatching(/exit code 134[\s\S]*FATAL: out of memory/),
    });
    await expect(ExecServerClient.spawn(fake('answers-then-dies'))).rejects.toMatchObject({
      kind: 'serverExited',
      message: expect.stringMatching(/exit code 1[\s\S]*FATAL: gone/),
    });
    for (const scenario of ['dies-mid-line', 'dies-mid-character']) {
      const client = await ExecServerClient.spawn(fake(scenario));
      try {
        const session = await client.start({ argv: ['x'], processId: 'p' });
        await expect(session.wait()).rejects.toMatchObject({
          kind: 'disconnected',
          message: expect.stringContaining('the server closed its output in the middle of a message'),
        });
      } finally {
        await client.close();
      }
    }
  });

  it('takes an initialize answer without a session id for a protocol violation', async () => {
    await expect(ExecServerClient.spawn(fake('bad-initialize'))).rejects.toMatchObject({
      kind: 'protocolViolation',
      message: 'exec-server answered initialize with a result it cannot have meant: 42',
    });
  });

  it('takes a notification it cannot read for a protocol violation: the session fails and the server is killed', async () => {
    const client = await ExecServerClient.spawn(fake('bad-chunk'));
    try {
      const session = await client.start({ argv: ['x'], processId: 'p' });
      await expect(session.wait()).rejects.toThrow(
        /protocol violation: exec-server sent a process\/output notification it cannot have meant/,
      );
      await expect(client.getMetadata('/')).rejects.toMatchObject({ kind: 'disconnected' });
    } finally {
      await client.close();
    }
  });
});

describe('backpressure from a slow consumer to the server', () => {
  let client: ExecServerClient;
  beforeAll(async () => {
    client = await ExecServerClient.spawn({ clientName: 'backpressure-test' });
  });
  afterAll(async () => {
    await client.close();
  });

  const BYTES = 12 * 1024 * 1024;
  const BOUND = 4 * 1024 * 1024;

  /** A session of BYTES of output, and how far what reached the client ran ahead of what `consumed` says was taken. */
  async function lead(consume: (session: Awaited<ReturnType<ExecServerClient['start']>>, took: (n: number) => void) => Promise<void>) {
    const session = await client.start({ argv: ['head', '-c', String(BYTES), '/dev/zero'] });
    let received = 0;
    let consumed = 0;
    let most = 0;
    // The consumer attaches first and takes what came before it; the count starts from there.
    const consuming = consume(session, (n) => (consumed += n));
    session.on('output', (event) => {
      received += event.chunk.length;
      most = Math.max(most, received - consumed);
    });
    await consuming;
    expect(consumed).toBe(BYTES);
    return most;
  }

  it('holds the server back while a piped stdout is behind', async () => {
    const most = await lead(async (session, took) => {
      const slow = new Writable({
        write(chunk: Buffer, _encoding, callback) {
          took(chunk.length);
          setTimeout(callback, 1);
        },
      });
      await pipeline(session.stdout, slow);
    });
    expect(most).toBeLessThan(BOUND);
  });

  it('holds it back while a for-await loop is behind', async () => {
    const most = await lead(async (session, took) => {
      for await (const event of session) {
        if (event.type !== 'output') continue;
        took(event.chunk.length);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    });
    expect(most).toBeLessThan(BOUND);
  });

  it('keeps reading while another process is waited for: a command run for each line of a long output', async () => {
    const producer = await client.start({ argv: ['seq', '1', '200000'] });
    const lines = readline.createInterface({ input: producer.stdout });
    let runs = 0;
    for await (const line of lines) {
      const echoed = await client.run(['echo', line]);
      expect(echoed.stdout.toString()).toBe(`${line}\n`);
      if (++runs === 10) break;
    }
    await producer.terminate();
    expect(runs).toBe(10);
  });

  it('holds it back while a streamed HTTP body is read slowly', async () => {
    // Measured at the web server while the reader stalls: what it sends meanwhile sits in socket
    // buffers, undici and the pipes when the client holds back (8 to 13 MiB seen here); the
    // whole body goes when it does not.
    const total = 24 * 1024 * 1024;
    const { server: web, sent } = bodyServer(total, 64 * 1024);
    const url = await listenLoopback(web);
    try {
      const { body } = await client.httpRequestStream({ method: 'GET', url });
      let consumed = 0;
      let most = 0;
      for await (const piece of body) {
        if (consumed === 0) await new Promise((resolve) => setTimeout(resolve, 1000));
        consumed += piece.length;
        most = Math.max(most, sent() - consumed);
      }
      expect(consumed).toBe(total);
      expect(most).toBeLessThan(20 * 1024 * 1024);
    } finally {
      await closeLoopback(web);
    }
  });

  it('keeps reading while a request awaits its answer: output piped into a file written over the same connection', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backpressure-'));
    try {
      const session = await client.start({ argv: ['head', '-c', String(BYTES), '/dev/zero'] });
      await pipeline(session.stdout, client.openWrite(path.join(dir, 'out')));
      expect(fs.statSync(path.join(dir, 'out')).size).toBe(BYTES);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
