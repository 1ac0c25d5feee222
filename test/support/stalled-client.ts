/**
 * A client of a real server process that can stop reading its answers
 * (over stdio or over WebSocket), and what the server has read meanwhile:
 * for the tests of backpressure and answer budgets.
 */
import fs from 'node:fs';
import { type TestContext, vi } from 'vitest';
import { WebSocket } from 'ws';
import { memoryBytes } from './proc.js';
import { ServerProcess } from './server-process.js';
import { listenOurs } from './websocket-server.js';

/**
 * The tests here run side by side (each has a server of its own, and much of their time is a stall
 * that waits): a server is disposed when its own test ends.
 */
export async function serverFor({ onTestFinished }: TestContext, args: string[] = []): Promise<ServerProcess> {
  const server = await ServerProcess.started(args);
  onTestFinished(() => server.dispose());
  return server;
}

/** The resident size of `pid`, in bytes. */
export const rssBytes = (pid: number): number => memoryBytes(pid, 'VmRSS');

/** Bytes the process has read, files and pipes alike (`rchar` in /proc/<pid>/io). */
export function bytesRead(pid: number): number {
  return Number(/^rchar: (\d+)/m.exec(fs.readFileSync(`/proc/${pid}/io`, 'latin1'))![1]);
}

/** Once `pid` has read at least `atLeast` bytes and then nothing more between two looks: what it has read. */
export async function readingSettled(pid: number, atLeast: number): Promise<number> {
  let last = -1;
  await vi.waitFor(
    () => {
      const now = bytesRead(pid);
      const settled = now === last && now >= atLeast;
      last = now;
      if (!settled) throw new Error('still reading');
    },
    { timeout: 20_000, interval: 300 },
  );
  return last;
}

/** A client of a server process that can stop reading its answers: over stdio or over WebSocket. */
export interface StallableClient {
  pid: number;
  send(message: Record<string, unknown>): Promise<void>;
  stopReading(): void;
  resumeReading(): void;
  answers: Map<unknown, { result?: { dataBase64?: string } }>;
  dispose(): Promise<void>;
}

/** Over stdio, each request a write of its own, a little apart: a read takes one line. */
export async function overStdio(context: TestContext, args: string[] = []): Promise<StallableClient> {
  const server = await serverFor(context, args);
  const answers = new Map();
  server.child.stdout.on('data', () => {
    for (const message of server.messages.splice(0)) if ('id' in message) answers.set(message.id, message);
  });
  return {
    pid: server.child.pid!,
    send: (message) => {
      server.sendLine(`${JSON.stringify(message)}\n`); // line and newline in one write
      return new Promise((resolve) => setTimeout(resolve, 5)); // the next in a read of its own
    },
    stopReading: () => server.child.stdout.pause(),
    resumeReading: () => server.child.stdout.resume(),
    answers,
    dispose: async () => undefined,
  };
}

/** Over WebSocket: one message per request, its newline a chunk of its own in the server. */
export async function overWebSocket(_context: TestContext): Promise<StallableClient> {
  const listener = await listenOurs();
  const socket = new WebSocket(listener.url, { headers: { Authorization: `Bearer ${listener.token}` } });
  await new Promise((resolve) => socket.once('open', resolve));
  const answers = new Map();
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString());
    if ('id' in message) answers.set(message.id, message);
  });
  socket.send(JSON.stringify({ id: 'init', method: 'initialize', params: { clientName: 'stall' } }));
  socket.send(JSON.stringify({ method: 'initialized', params: {} }));
  await vi.waitFor(
    () => {
      if (!answers.has('init')) throw new Error('initialize not answered yet');
    },
    { timeout: 15_000 },
  );
  const tcp = (socket as unknown as { _socket: import('node:net').Socket })._socket;
  return {
    pid: listener.pid,
    send: async (message) => socket.send(JSON.stringify(message)),
    stopReading: () => tcp.pause(),
    resumeReading: () => tcp.resume(),
    answers,
    dispose: async () => {
      socket.terminate();
      await listener.stop();
    },
  };
}

/** Once `client` has an answer for every id: each answer's `bodyBase64` (undefined for an error). */
export async function bodiesAnswered(client: StallableClient, ids: string[]): Promise<Array<string | undefined>> {
  await vi.waitFor(
    () => {
      if (ids.some((id) => !client.answers.has(id))) throw new Error('answers still missing');
    },
    { timeout: 30_000, interval: 50 },
  );
  return ids.map((id) => (client.answers.get(id) as { result?: { bodyBase64?: string } }).result?.bodyBase64);
}
