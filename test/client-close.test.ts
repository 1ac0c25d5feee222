import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ExecServer, ExecServerClient, ExecServerClientError, type ProcessEvent } from '../src/index.js';
import { waitDead } from './support/proc.js';

const FAKE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'support/fake-server.mjs');

/** The message a call fails with, or 'answered'. */
const outcome = (call: Promise<unknown>) =>
  call.then(
    () => 'answered',
    (error: Error) => (error instanceof ExecServerClientError ? error.message : `not a client error: ${error}`),
  );

describe('ExecServerClient.close', () => {
  it('lets the server answer what was sent before it: closing stdin is not losing the connection', async () => {
    for (const before of ['same tick', 'a turn of the event loop'] as const) {
      const client = await ExecServerClient.spawn({ clientName: 'close-test' });
      const answer = client.getMetadata('/tmp').then(
        (metadata) => metadata.isDirectory,
        (error: Error) => error.message,
      );
      if (before !== 'same tick') await new Promise((resolve) => setImmediate(resolve));
      await client.close();
      expect(await answer, before).toBe(true);
      await expect(client.getMetadata('/tmp')).rejects.toThrow('exec-server transport disconnected: client closed');
    }
  });

  it('fails calls made while it is under way as closed, not with the JSON-RPC engine error', async () => {
    const client = await ExecServerClient.spawn({ clientName: 'close-test' });
    await client.start({ argv: ['sleep', '0.3'] }); // keeps the server draining for a while
    const closing = client.close();
    const outcomes = [];
    for (const wait of [0, 5, 50]) {
      await sleep(wait);
      outcomes.push(await outcome(client.getMetadata('/tmp')));
    }
    await closing;
    expect(outcomes).toEqual(Array(3).fill('exec-server transport disconnected: client closed'));
  });
});

describe('a connection whose output closes without an end', () => {
  it('fails the calls in flight and later ones (a socket destroyed here)', async () => {
    const listener = net.createServer((socket) => new ExecServer({ input: socket, output: socket }).listen());
    await new Promise<void>((listening) => listener.listen(0, '127.0.0.1', listening));
    const socket = net.connect((listener.address() as net.AddressInfo).port, '127.0.0.1');
    try {
      await new Promise((connected) => socket.once('connect', connected));
      const client = await ExecServerClient.connect(socket, socket, { clientName: 'close-test' });
      const { processId } = await client.start({ argv: ['sleep', '5'] });
      const inFlight = outcome(client.request('process/read', { processId, afterSeq: 0, maxBytes: 1000, waitMs: 20_000 }));
      await sleep(50); // the long poll is on its way
      socket.destroy();
      expect(await inFlight).toBe('exec-server transport disconnected: connection closed');
      expect(await outcome(client.getMetadata('/tmp'))).toBe('exec-server transport disconnected: connection closed');
      await client.close();
    } finally {
      socket.destroy();
      await new Promise((closed) => listener.close(closed));
    }
  });
});

describe('a server whose output ends right after its last messages', () => {
  it('delivers the answer and events that came with the end', async () => {
    const client = await ExecServerClient.spawn({ command: process.execPath, args: [FAKE, 'last-words'], clientName: 'close-test' });
    try {
      const session = await client.start({ argv: ['true'] });
      const events: ProcessEvent['type'][] = [];
      for await (const event of session) events.push(event.type);
      expect(events).toEqual(['exited', 'closed']);
    } finally {
      await client.close();
    }
  });
});

describe('a server that leaves a daemon holding its stdout (a wrapper, ssh, docker)', () => {
  /** Runs `body` with the daemon's pid file, and kills the daemon afterwards. */
  async function withDaemon(body: (env: NodeJS.ProcessEnv) => Promise<void>): Promise<void> {
    const pidFile = path.join(os.tmpdir(), `fake-daemon-${process.pid}-${Date.now()}`);
    try {
      await body({ ...process.env, FAKE_DAEMON_PIDFILE: pidFile });
    } finally {
      expect(fs.existsSync(pidFile), 'the fake server never started its daemon').toBe(true);
      const pid = Number(fs.readFileSync(pidFile, 'utf8'));
      fs.rmSync(pidFile);
      process.kill(pid, 'SIGKILL');
      expect(await waitDead([pid])).toEqual([]);
    }
  }

  it('spawn gives up when initialize is not answered in time, instead of waiting for the daemon', async () => {
    await withDaemon(async (env) => {
      const started = Date.now();
      // A shell that leaves the daemon first thing, then reads and never answers: Node's start-up does
      // not come before the daemon (a run beside heavy tests once gave up before it existed).
      const script = 'setsid sleep 60 </dev/null 2>/dev/null & echo $! > "$FAKE_DAEMON_PIDFILE"; exec cat >/dev/null';
      const spawned = ExecServerClient.spawn({ command: '/bin/sh', args: ['-c', script], env, initializeTimeoutMs: 2000 });
      await expect(spawned).rejects.toMatchObject({ kind: 'handshakeTimeout' });
      expect(Date.now() - started).toBeLessThan(5000);
    });
  });

  it('close returns once the server is gone, and the daemon does not keep it waiting', async () => {
    await withDaemon(async (env) => {
      const client = await ExecServerClient.spawn({ command: process.execPath, args: [FAKE, 'deaf-daemon'], env });
      const started = Date.now();
      await client.close(); // stdin closed, ignored; SIGTERM after the grace period
      expect(Date.now() - started).toBeLessThan(5000);
    });
  });
});
