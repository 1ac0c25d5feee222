/**
 * The WebSocket listener's connection limits, in process: with a short ping
 * interval, a peer that answers pings stays connected however long it is
 * idle, and one that stops answering is dropped (its session waits to be
 * resumed); a frame over the size limit closes the connection with 1009.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { ExecServerClient, type ProcessEvent } from '../src/index.js';
import { waitBlockedIn } from './support/proc.js';
import { listenWebSocket } from '../src/cli/websocket-listener.js';
import type { Logger } from '../src/server/logger.js';
import { ProcessRuntime } from '../src/server/process/runtime.js';

const PING_MS = 40;
const MAX_FRAME_BYTES = 1 << 20;
const logs: string[] = [];
const logWaiters = new Set<() => void>();
const log = (message: string) => {
  logs.push(message);
  for (const waiter of logWaiters) waiter();
};
const logger: Logger = { error: log, warn: log, info: log, log, debug: () => undefined };

/** Resolves once the listener has logged `message`. */
function logged(message: string): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (!logs.includes(message)) return;
      logWaiters.delete(check);
      resolve();
    };
    logWaiters.add(check);
    check();
  });
}
const runtime = new ProcessRuntime();
let listener: Awaited<ReturnType<typeof listenWebSocket>>;

const listenerOptions = () => ({
  host: '127.0.0.1',
  port: 0,
  tokenSha256: undefined,
  allowedOrigins: [],
  maxFrameBytes: MAX_FRAME_BYTES,
  pingIntervalMs: PING_MS,
  detachedTtlMs: 60_000,
  server: {},
  runtime,
  logger,
});

beforeAll(async () => {
  listener = await listenWebSocket(listenerOptions());
});
afterAll(async () => {
  await listener.close();
  runtime.stop();
});

async function initialized(socket: WebSocket): Promise<string> {
  await new Promise((resolve) => socket.once('open', resolve));
  const answer = new Promise<{ result: { sessionId: string } }>((resolve) =>
    socket.once('message', (data) => resolve(JSON.parse(`${data}`))),
  );
  socket.send(JSON.stringify({ id: 1, method: 'initialize', params: { clientName: 'liveness' } }));
  return (await answer).result.sessionId;
}

describe('WebSocket liveness', () => {
  it('keeps an idle peer that answers pings', async () => {
    // An interval of its own: this peer and the listener share one event loop, and a pause of the
    // interval's length between a ping and its pong (a GC of the test worker) would drop the peer.
    const roomy = await listenWebSocket({ ...listenerOptions(), pingIntervalMs: 250 });
    const socket = new WebSocket(roomy.url);
    try {
      await initialized(socket);
      let closed = false;
      socket.once('close', () => (closed = true));
      // Six pings: three times the interval after which a silent peer is dropped.
      await new Promise<void>((resolve) => {
        let pings = 0;
        socket.on('ping', () => ++pings === 6 && resolve());
      });
      expect(closed).toBe(false);
    } finally {
      socket.close(1000);
      await roomy.close();
    }
  });

  it('keeps a client that stopped reading (backpressure all the way to the child), which then gets every byte', async () => {
    // An interval long enough for the client to read what the kernel holds once it reads again (its own
    // pings, every 15 s, would show it there in a real one); the stall below lasts several of them.
    const roomy = await listenWebSocket({ ...listenerOptions(), pingIntervalMs: 400 });
    const client = await ExecServerClient.connectWebSocket(roomy.url);
    try {
      const session = await client.start({ argv: ['sh', '-c', 'echo $$; exec head -c 50000000 /dev/zero'] });
      const events = session[Symbol.asyncIterator]();
      const first = (await events.next()).value as Extract<ProcessEvent, { type: 'output' }>;
      const pidLine = first.chunk.toString('latin1').split('\n')[0]!;
      // Nothing read: the client stops reading its socket, the server its pipe, and head blocks writing.
      expect(await waitBlockedIn(Number(pidLine), /pipe_write/)).toBe(true);
      // Many ping intervals while nothing is read: the pong is held up behind the output, not missing.
      await new Promise((resolve) => setTimeout(resolve, 6 * 400));
      let bytes = first.chunk.length;
      const ends: string[] = [];
      for (let next = await events.next(); !next.done; next = await events.next()) {
        if (next.value.type === 'output') bytes += next.value.chunk.length;
        else ends.push(next.value.type === 'failed' ? next.value.message : next.value.type);
      }
      expect(ends).toEqual(['exited', 'closed']);
      expect(bytes).toBe(pidLine.length + 1 + 50_000_000);
    } finally {
      await client.close();
      await roomy.close();
    }
  });

  it('drops a peer that stops answering pings, and detaches its session', async () => {
    const socket = new WebSocket(listener.url, { autoPong: false });
    const sessionId = await initialized(socket);
    const code = await new Promise<number>((resolve) => socket.once('close', resolve));
    expect(code).toBe(1006);
    await logged(`session ${sessionId.slice(0, 8)}… detached; it can be resumed for 60000 ms`);
  });

  it('closes the connection on a frame over the limit (1009)', async () => {
    const socket = new WebSocket(listener.url);
    await initialized(socket);
    const closed = new Promise<number>((resolve) => socket.once('close', resolve));
    socket.send(JSON.stringify({ id: 2, method: 'environment/status', params: 'x'.repeat(MAX_FRAME_BYTES) }));
    expect(await closed).toBe(1009);
  });

  it('checks at once a connection whose session another client wants back, and drops it if it is dead', async () => {
    const slow = await listenWebSocket({ ...listenerOptions(), pingIntervalMs: 60_000 });
    try {
      const holder = new WebSocket(slow.url, { autoPong: false });
      const sessionId = await initialized(holder);
      const resume = async () => {
        const socket = new WebSocket(slow.url);
        await new Promise((resolve) => socket.once('open', resolve));
        const answer = new Promise<{ error?: { code: number } }>((resolve) =>
          socket.once('message', (data) => resolve(JSON.parse(`${data}`))),
        );
        socket.send(JSON.stringify({ id: 1, method: 'initialize', params: { clientName: 'resumer', resumeSessionId: sessionId } }));
        const result = await answer;
        socket.close(1000);
        return result;
      };
      // The holder looks alive until asked: refused at first, then dropped for not answering a ping.
      expect((await resume()).error?.code).toBe(-32010);
      const holderClosed = await new Promise<number>((resolve) => holder.once('close', resolve));
      expect(holderClosed).toBe(1006);
      await logged(`session ${sessionId.slice(0, 8)}… detached; it can be resumed for 60000 ms`);
      expect((await resume()).error).toBeUndefined();
    } finally {
      await slow.close();
    }
  });

  it('refuses connections beyond its bound with 503, and takes one again once another closes', async () => {
    const small = await listenWebSocket({ ...listenerOptions(), maxConnections: 2 });
    const status = () =>
      new Promise<number>((resolve) => {
        const socket = new WebSocket(small.url);
        socket.once('open', () => resolve(101));
        socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
        socket.once('error', () => undefined);
        opened.push(socket);
      });
    const opened: WebSocket[] = [];
    try {
      expect([await status(), await status(), await status()]).toEqual([101, 101, 503]);
      const closed = new Promise((resolve) => opened[0]!.once('close', resolve));
      opened[0]!.close(1000);
      await closed;
      await vi.waitFor(async () => expect(await status()).toBe(101), { timeout: 5000, interval: 50 });
    } finally {
      for (const socket of opened) socket.terminate();
      await small.close();
    }
  });
});
