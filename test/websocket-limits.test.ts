/**
 * A WebSocket listener's bounds against a peer that does not play along,
 * through the real CLI: a client that sends without reading cannot fill the
 * server's memory (the server stops reading it, as over stdio), and a
 * shutdown says so to each peer (1001) and is not held up by an HTTP
 * request left half sent.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLI } from './support/server-process.js';
import { rssBytes } from './support/stalled-client.js';
import { startWebSocketListener } from './support/websocket-server.js';
import { WsRpc } from './support/ws-rpc.js';

const MiB = 1024 * 1024;

/** Resolves with `read()` once it has not changed for `quietMs` (a backlog the peer stopped taking, or none left). */
async function settled(read: () => number, quietMs: number): Promise<number> {
  let last = read();
  let since = Date.now();
  while (Date.now() - since < quietMs) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = read();
    if (now !== last) [last, since] = [now, Date.now()];
  }
  return last;
}

describe('a WebSocket listener facing a peer that does not play along', () => {
  it('stops reading a client that sends without reading the answers, so its memory stays bounded', async () => {
    const listener = await startWebSocketListener(process.execPath, [CLI, '--listen', 'ws://127.0.0.1:0']);
    const file = path.join(os.tmpdir(), `ws-limits-${process.pid}.bin`);
    try {
      const rpc = await WsRpc.open(listener.url);
      await rpc.initialize();
      const before = rssBytes(listener.pid);
      rpc.pauseReading();
      // Answers the size of a file, which soon fill what TCP holds: the server's writer backs up, and it stops reading.
      fs.writeFileSync(file, Buffer.alloc(MiB, 1));
      const read = JSON.stringify({ method: 'fs/readFile', params: { path: pathToFileURL(file).href } });
      for (let id = 1; id <= 40; id++) rpc.sendText(Buffer.from(`{"id":${100_000 + id},${read.slice(1)}`));
      // Then 80 MB more of requests: they must wait on the client's side, not in the server's memory.
      const pad = 'x'.repeat(10_000);
      for (let id = 1; id <= 8000; id++) rpc.sendText(Buffer.from(JSON.stringify({ id: 200_000 + id, method: 'nope', params: { pad } })));
      // The client's backlog stops shrinking once the server stops taking it (or is gone, if it takes it all).
      const left = await settled(() => rpc.bufferedAmount, 1500);
      expect(left).toBeGreaterThan(40 * MiB);
      expect(rssBytes(listener.pid) - before).toBeLessThan(48 * MiB);
      await rpc.cut();
    } finally {
      fs.rmSync(file, { force: true });
      await listener.stop();
    }
  });

  it('says it is going away (1001) to each peer as it shuts down, and exits though an HTTP request is half sent', async () => {
    // SIGKILLed after 3 s: a close held up by the half-sent request (5 s) would show as that signal.
    const listener = await startWebSocketListener(process.execPath, [CLI, '--listen', 'ws://127.0.0.1:0'], { killAfterMs: 3000 });
    const port = Number(new URL(listener.url).port);
    const half = net.connect(port, '127.0.0.1', () => half.write('GET /readyz HTTP/1.1\r\nHost: x\r\n'));
    half.on('error', () => undefined);
    try {
      const rpc = await WsRpc.open(listener.url);
      await rpc.initialize();
      const closed = rpc.closed;
      await listener.stop();
      expect(await closed).toBe(1001);
      expect(await listener.exitStatus).toEqual({ code: 0, signal: null });
    } finally {
      half.destroy();
      await listener.stop();
    }
  });

  it('serves on when the launcher closed stdout before the URL could be printed there', async () => {
    const child = spawn(process.execPath, [CLI, '--listen', 'ws://127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
        const found = /listening on (ws:\/\/\S+)/.exec(stderr);
        if (found && stderr.includes('cannot print the URL')) resolve(found[1]!);
      });
      void exited.then(() => reject(new Error(`exited: ${stderr}`)));
    });
    try {
      const rpc = await WsRpc.open(url);
      expect(await rpc.initialize()).toBeDefined();
      await rpc.close();
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
