/**
 * Servers that break the protocol in ways a schema does not catch: the
 * client ends the affected session (or the connection) with a message that
 * says what was wrong, instead of hanging, passing garbage on, or losing
 * what came before the fault.
 */
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { ExecServerClient } from '../src/index.js';

const FAKE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'support/fake-server.mjs');
const fake = (scenario: string) => ({ command: process.execPath, args: [FAKE, scenario], initializeTimeoutMs: 5000 });

async function withSession<T>(
  scenario: string,
  act: (client: ExecServerClient, session: Awaited<ReturnType<ExecServerClient['start']>>) => Promise<T>,
) {
  const client = await ExecServerClient.spawn(fake(scenario));
  try {
    return await act(client, await client.start({ argv: ['x'], processId: 'p' }));
  } finally {
    await client.close();
  }
}

describe('a server that breaks the protocol past its schema', () => {
  it('fails a catch-up whose process/read ignores afterSeq, instead of asking for ever', async () => {
    await withSession('ignores-after-seq', async (_client, session) => {
      await expect(session.wait()).rejects.toThrow('process/read after seq 1 answered seq 1: the server does not honour afterSeq');
    });
  });

  it('handles the answer and the event that came before a line that is not JSON, then fails', async () => {
    await withSession('answer-then-garbage', async (client, session) => {
      const events: unknown[] = [];
      session.on('event', (event) => events.push(event));
      await expect(session.wait()).rejects.toThrow('exec-server sent a line that is not JSON-RPC: "NOT JSON"');
      expect(events[0]).toEqual({ type: 'output', seq: 1, stream: 'stdout', chunk: Buffer.from('a') });
      await expect(client.getMetadata('/')).rejects.toMatchObject({ kind: 'disconnected' });
    });
  });

  it.each(['bad-base64', 'bad-base64-reordered'])('takes a chunk that is not base64 for a violation (%s)', async (scenario) => {
    await withSession(scenario, async (_client, session) => {
      await expect(session.wait()).rejects.toThrow(
        /exec-server sent a process\/output notification it cannot have meant \(chunk: Invalid symbol 42, offset 2\.\)/,
      );
    });
  });

  it.each([
    ['closed-on-taken-seq', 'closed came with seq 2, which an earlier event has'],
    ['two-exits', 'exited came twice, with seq 1 and 2'],
  ])('fails a session whose seqs break the rules (%s)', async (scenario, fault) => {
    await withSession(scenario, async (_client, session) => {
      await expect(session.wait()).rejects.toThrow(`exec-server broke the seq rules of process p: ${fault}`);
    });
  });

  it('passes over a notification nested 20,000 deep with a \\u escape in it', async () => {
    await withSession('deep-notification', async (_client, session) => {
      expect(await session.wait()).toBe(0);
    });
  });
});

describe('a WebSocket server that refuses the handshake', () => {
  it('gets its connection closed by the client that gave up on it', async () => {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => server.once('listening', resolve));
    const closed = new Promise<void>((resolve) =>
      server.on('connection', (socket) => {
        socket.on('message', (data) => {
          const { id } = JSON.parse(String(data));
          socket.send(JSON.stringify({ id, error: { code: -32600, message: 'unknown session id bogus' } }));
        });
        socket.on('close', () => resolve());
      }),
    );
    try {
      const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await expect(ExecServerClient.connectWebSocket(url, { resumeSessionId: 'bogus' })).rejects.toThrow('unknown session id bogus');
      await closed; // never, when the client left its socket open
    } finally {
      for (const socket of server.clients) socket.terminate();
      server.close();
    }
  });
});
