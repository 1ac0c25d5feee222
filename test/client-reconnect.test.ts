/**
 * The client's `reconnect` over WebSocket, through a TCP proxy the test cuts
 * mid-stream: the client resumes its session on a new connection, process
 * sessions go on from their last seq (every event once, in order), requests
 * that may be repeated are sent again, and others reject with
 * `outcomeUnknown` rather than guessing.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventQueue } from '../src/client/event-queue.js';
import { ExecServerClient, type ProcessEvent } from '../src/index.js';
import { waitDead, waitFound } from './support/proc.js';
import { codexBinary, isInstalled } from '../scripts/interop/install.mjs';
import { tcpProxy } from '../scripts/interop/tcp-proxy.mjs';
import { type ReconnectRig, reconnectRig } from './support/reconnect-rig.js';
import { CLI } from './support/server-process.js';
import { listenCodex, startWebSocketListener } from './support/websocket-server.js';

let rig: ReconnectRig;
let proxy: ReconnectRig['proxy'];
beforeAll(async () => {
  rig = await reconnectRig();
  proxy = rig.proxy;
});
afterAll(() => rig.close());
const goDown = (sessionId: string) => rig.goDown(sessionId);

const expected = (count: number) => `${Array.from({ length: count }, (_, index) => index + 1).join('\n')}\n`;

describe('ExecServerClient reconnect', () => {
  it('resumes after the connection is cut mid-output: every event once, in seq order', async () => {
    const client = await ExecServerClient.connectWebSocket(proxy.url, { reconnect: true });
    try {
      // Output spread over time, so that the cut falls in the middle of it.
      const session = await client.start({
        argv: ['sh', '-c', 'for i in $(seq 0 49); do seq $((i*2000+1)) $((i*2000+2000)); sleep 0.01; done'],
      });
      const events: ProcessEvent[] = [];
      let cut = false;
      for await (const event of session) {
        events.push(event);
        if (!cut && event.type === 'output' && event.seq >= 3) {
          cut = true;
          proxy.cut();
        }
      }
      const outputs = events.filter((event) => event.type === 'output');
      expect(Buffer.concat(outputs.map((event) => event.chunk)).toString()).toBe(expected(100_000));
      expect(events.map((event) => event.type).slice(-2)).toEqual(['exited', 'closed']);
      expect(events.map((event) => ('seq' in event ? event.seq : -1))).toEqual(events.map((_, index) => index + 1));
      expect(proxy.connections).toBeGreaterThanOrEqual(2);
      // The same session goes on: a new command runs on the resumed connection.
      expect((await client.run(['echo', 'still here'])).stdout.toString()).toBe('still here\n');
    } finally {
      await client.close();
    }
  });

  it('sends a write made while down once resumed, and catches up with an exit that happened while down', async () => {
    const client = await ExecServerClient.connectWebSocket(proxy.url, { reconnect: true });
    try {
      const session = await client.start({
        argv: ['sh', '-c', 'echo one; read line; echo "got $line"; exec sleep 30.97'],
        pipeStdin: true,
      });
      const events: ProcessEvent[] = [];
      const outputs = new EventQueue<string>();
      session.on('event', (event: ProcessEvent) => {
        events.push(event);
        if (event.type === 'output') outputs.push(event.chunk.toString());
      });
      expect((await outputs.next()).value).toBe('one\n');
      // Down: a write (it carries a writeId) waits for the resume and is sent then.
      await goDown(client.sessionId);
      const written = session.closeStdin('hello\n');
      proxy.unblock();
      expect(await written).toBe('accepted');
      expect((await outputs.next()).value).toBe('got hello\n');
      // Down again: the process dies meanwhile, so its exit can only come from catching up.
      const [sleeper] = await waitFound('30.97', 'sleep');
      await goDown(client.sessionId);
      process.kill(sleeper!, 'SIGKILL');
      expect(await waitDead([sleeper!])).toEqual([]);
      proxy.unblock();
      expect(await session.wait()).toBe(137);
      expect(events.map((event) => event.type)).toEqual(['output', 'output', 'exited', 'closed']);
      expect(events.map((event) => ('seq' in event ? event.seq : 0))).toEqual([1, 2, 3, 4]);
    } finally {
      proxy.unblock();
      await client.close();
    }
  });

  it('fails file streams whose connection a reconnect replaced with a disconnected error that says so', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-reconnect-files-'));
    const client = await ExecServerClient.connectWebSocket(proxy.url, { reconnect: true });
    try {
      // Two writers opened with no block on their way at the cut (an empty write is called back once
      // the file is open; a block in flight at the cut gets outcomeUnknown). Readers share the check.
      const writers = ['written-while-down', 'written-after-resume'].map((name) =>
        client.openWrite(path.join(dir, name), { blockSize: 4096 }),
      );
      const errors = writers.map((writer) => new Promise<Error>((resolve) => writer.on('error', resolve)));
      for (const writer of writers) {
        await new Promise<void>((resolve, reject) => writer.write(Buffer.alloc(0), (error) => (error ? reject(error) : resolve())));
      }
      await goDown(client.sessionId);
      // Blocks go out ahead: a failed one is reported at the latest by the end.
      writers[0]!.end(Buffer.alloc(4096, 1)); // waits for the resume, then goes out on the new connection
      proxy.unblock();
      await client.getMetadata(dir); // resumed on a new connection
      writers[1]!.end(Buffer.alloc(4096, 2));
      for (const error of await Promise.all(errors)) {
        expect(error).toMatchObject({ name: 'ExecServerClientError', kind: 'disconnected' });
        expect(error.message).toContain('the connection this file was opened on was replaced');
      }
    } finally {
      proxy.unblock();
      await client.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects a request that was in flight and may not be repeated, with outcomeUnknown', async () => {
    let answered = 0;
    const held: http.ServerResponse[] = [];
    const web = http.createServer((_request, response) => {
      answered++;
      held.push(response);
    });
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    const client = await ExecServerClient.connectWebSocket(proxy.url, { reconnect: true });
    try {
      const { port } = web.address() as { port: number };
      const sleeper = await client.start({ argv: ['sleep', '30.98'], bufferEvents: false });
      // A long-poll read in flight at the cut may be repeated: it is sent again and answers.
      const poll = sleeper.read({ afterSeq: 0, waitMs: 300 });
      const request = client.httpRequest({ method: 'GET', url: `http://127.0.0.1:${port}/` });
      // Cut once the server has made the request: the answer can no longer arrive on this connection.
      while (answered === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      proxy.cut();
      await expect(request).rejects.toMatchObject({ kind: 'outcomeUnknown', message: expect.stringContaining('http/request') });
      expect(answered).toBe(1);
      expect(await poll).toMatchObject({ chunks: [], exited: false });
      expect(await sleeper.terminate()).toBe(true);
      expect((await client.environmentInfo()).shell.path).toMatch(/^\//);
    } finally {
      for (const response of held) response.destroy();
      await client.close();
      web.close();
    }
  });

  it('fails like any disconnect when the session cannot be resumed', async () => {
    const short = await startWebSocketListener(process.execPath, [CLI, '--listen', 'ws://127.0.0.1:0', '--detached-session-ttl-ms', '0']);
    const shortProxy = await tcpProxy(short.url);
    const client = await ExecServerClient.connectWebSocket(shortProxy.url, { reconnect: { windowMs: 5000 } });
    try {
      const session = await client.start({ argv: ['sleep', '30.96'] });
      shortProxy.cut();
      await expect(session.wait()).rejects.toMatchObject({ message: expect.stringContaining(`cannot resume session ${client.sessionId}`) });
      await expect(client.run(['true'])).rejects.toMatchObject({ kind: 'disconnected' });
    } finally {
      await client.close();
      await shortProxy.close();
      await short.stop();
    }
  });

  it('starts a process asked for while the connection is down, once the session is resumed', async () => {
    let noticed!: () => void;
    const reconnecting = new Promise<void>((resolve) => (noticed = resolve));
    const client = await ExecServerClient.connectWebSocket(proxy.url, { reconnect: { onReconnecting: () => noticed() } });
    try {
      await goDown(client.sessionId);
      await reconnecting;
      const starting = client.start({ argv: ['echo', 'started while down'] });
      proxy.unblock();
      const session = await starting;
      expect(await session.wait()).toBe(0);
      expect(Buffer.concat((await session.read()).chunks.map((chunk) => chunk.chunk)).toString()).toBe('started while down\n');
    } finally {
      proxy.unblock();
      await client.close();
    }
  });

  it('gives up within its window when new connections hang, and bounds a first connection too', async () => {
    const wedged = await tcpProxy(rig.listener.url);
    try {
      const client = await ExecServerClient.connectWebSocket(wedged.url, { reconnect: { windowMs: 500 } });
      wedged.stall();
      wedged.cut();
      await expect(client.environmentInfo()).rejects.toMatchObject({ kind: 'disconnected', message: expect.stringContaining('500 ms') });
      // A first connection is bounded too (by initializeTimeoutMs).
      await expect(ExecServerClient.connectWebSocket(wedged.url, { initializeTimeoutMs: 300 })).rejects.toMatchObject({
        kind: 'connectFailed',
      });
    } finally {
      await wedged.close();
    }
  });

  it('releases calls waiting for a resume when the client is closed', async () => {
    const wedged = await tcpProxy(rig.listener.url);
    try {
      const client = await ExecServerClient.connectWebSocket(wedged.url, { reconnect: { windowMs: 60_000 } });
      wedged.stall();
      wedged.cut();
      const waiting = client.run(['true']);
      await client.close();
      await expect(waiting).rejects.toMatchObject({ kind: 'disconnected' });
    } finally {
      await wedged.close();
    }
  });
});

// The same client against Codex 0.169's own listener, which resumes sessions too.
const codex = isInstalled('0.169.0') ? codexBinary('0.169.0') : undefined;
describe.skipIf(codex === undefined)(
  `ExecServerClient reconnect against Codex 0.169's listener${codex ? '' : ' (skipped: not installed)'}`,
  () => {
    it('resumes after the connection is cut mid-output: every event once, in seq order', async () => {
      const reference = await listenCodex(codex!);
      const cutter = await tcpProxy(reference.url);
      const client = await ExecServerClient.connectWebSocket(cutter.url, { token: reference.token, reconnect: true });
      try {
        const session = await client.start({
          argv: ['sh', '-c', 'for i in $(seq 0 19); do seq $((i*1000+1)) $((i*1000+1000)); sleep 0.02; done'],
        });
        const events: ProcessEvent[] = [];
        for await (const event of session) {
          events.push(event);
          if (event.type === 'output' && event.seq === 3) cutter.cut();
        }
        const outputs = events.filter((event) => event.type === 'output');
        expect(Buffer.concat(outputs.map((event) => event.chunk)).toString()).toBe(expected(20_000));
        expect(events.map((event) => event.type).slice(-2)).toEqual(['exited', 'closed']);
        expect(events.map((event) => ('seq' in event ? event.seq : -1))).toEqual(events.map((_, index) => index + 1));
        expect(cutter.connections).toBeGreaterThanOrEqual(2);
      } finally {
        await client.close();
        await cutter.close();
        await reference.stop();
      }
    });

    it('catches up with output and an exit that happened while the connection was down', async () => {
      const reference = await listenCodex(codex!);
      const cutter = await tcpProxy(reference.url);
      const client = await ExecServerClient.connectWebSocket(cutter.url, { token: reference.token, reconnect: true });
      try {
        const session = await client.start({ argv: ['sh', '-c', 'read go; echo "late $go"; exit 4'], pipeStdin: true });
        const [shell] = await waitFound('late $go', 'sh');
        cutter.block();
        cutter.cut();
        // Finished while no connection is attached: its stdin is written through /proc, not through the server.
        fs.writeFileSync(`/proc/${shell}/fd/0`, 'now\n');
        expect(await waitDead([shell!])).toEqual([]);
        cutter.unblock();
        expect(await session.wait()).toBe(4);
        expect(Buffer.concat((await session.read()).chunks.map((chunk) => chunk.chunk)).toString()).toBe('late now\n');
      } finally {
        cutter.unblock();
        await client.close();
        await cutter.close();
        await reference.stop();
      }
    });
  },
);
