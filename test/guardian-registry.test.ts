/**
 * The guardian's registry in a long-lived WebSocket server: what a session
 * registered is gone from it once the session has ended and swept what its
 * processes left, so that it neither grows with every session nor names
 * long-dead numbers at a later crash.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecServerClient } from '../src/index.js';
import { childrenOf } from './support/proc.js';
import { CLI } from './support/server-process.js';
import { startWebSocketListener, type WebSocketListener } from './support/websocket-server.js';

let listener: WebSocketListener;
beforeAll(async () => {
  listener = await startWebSocketListener(process.execPath, [CLI, '--listen', 'ws://127.0.0.1:0']);
});
afterAll(() => listener.stop());

/** The registry as the guardian (the listener's `sh` child holding it as fd 3) would read it now. */
function registry(): string {
  for (const pid of childrenOf(listener.pid)) {
    const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1');
    if (args.includes("trap ''")) return fs.readFileSync(`/proc/${pid}/fd/3`, 'latin1');
  }
  throw new Error('no guardian');
}

describe('the guardian registry of a WebSocket server', () => {
  it('is empty again after each session, processes killed at its end included', async () => {
    for (let round = 0; round < 3; round++) {
      const client = await ExecServerClient.connectWebSocket(listener.url);
      for (let i = 0; i < 3; i++) await client.start({ argv: ['sleep', '300'] });
      await client.run(['sh', '-c', 'sleep 300.5 >/dev/null 2>&1 & exit 0']);
      expect(registry()).not.toBe('');
      await client.close();
      // The session ends on the server a moment after the client's close: its sweep empties the registry.
      const deadline = Date.now() + 5000;
      while (registry() !== '' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(registry()).toBe('');
    }
  });
});
