/**
 * ExecServerClient against Codex's own exec-server, both generations over
 * stdio and Codex 0.169.0 over WebSocket (skipped without the cached binaries).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { codexBinary } from '../scripts/interop/install.mjs';
import { ExecServerClient } from '../src/index.js';
import { hasWebSocketReference, REFERENCES, WEBSOCKET_REFERENCE_VERSION, webSocketReferenceSkipReason } from './support/executors.js';
import { listenCodex } from './support/websocket-server.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-client-ref-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Runs commands (piped and PTY) and reads and writes a file through a client connected to a reference. */
async function expectWorks(client: ExecServerClient, name: string): Promise<void> {
  const piped = await client.run(['sh', '-c', 'echo out; echo err >&2; exit 5']);
  expect([piped.exitCode, piped.stdout.toString(), piped.stderr.toString()]).toEqual([5, 'out\n', 'err\n']);
  const tty = await client.run(['stty', 'size'], { tty: true });
  expect(tty.output.toString()).toBe('24 80\r\n');
  const file = path.join(tmp, `ref-file-${name}`);
  await client.writeFile(file, 'via reference');
  expect((await client.readFile(file)).toString()).toBe('via reference');
  if (client.protocolGeneration === 1) {
    // Codex 0.134 (generation 1) has neither method.
    await expect(client.environmentInfo()).rejects.toMatchObject({ code: -32601 });
    await expect(client.canonicalize(file)).rejects.toMatchObject({ code: -32601 });
  } else {
    // Codex 0.169 (generation 2): the client sends URIs and gives native paths back.
    expect((await client.environmentInfo()).shell.path).toMatch(/^\//);
    expect(await client.canonicalize(file)).toBe(fs.realpathSync(file));
  }
}

describe.each(REFERENCES)('against the reference exec-server ($name)', ({ name, binary }) => {
  it('runs commands and reads files through codex exec-server', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'codex-home-'));
    const client = await ExecServerClient.spawn({
      command: binary,
      args: ['exec-server', '--listen', 'stdio'],
      env: { ...process.env, CODEX_HOME: home },
    });
    try {
      await expectWorks(client, name.replace(/\W+/g, '-'));
    } finally {
      await client.close();
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});

describe(`against the reference exec-server over WebSocket (codex ${WEBSOCKET_REFERENCE_VERSION})`, () => {
  it.skipIf(!hasWebSocketReference)('runs commands and reads files through codex exec-server --listen ws://, with a token', async () => {
    const listener = await listenCodex(codexBinary(WEBSOCKET_REFERENCE_VERSION));
    try {
      await expect(ExecServerClient.connectWebSocket(listener.url)).rejects.toMatchObject({
        kind: 'connectFailed',
        message: expect.stringContaining('HTTP 401'),
      });
      const client = await ExecServerClient.connectWebSocket(listener.url, { token: listener.token });
      try {
        expect(client.protocolGeneration).toBe(2);
        await expectWorks(client, 'websocket');
      } finally {
        await client.close();
      }
    } finally {
      await listener.stop();
    }
  });
  if (!hasWebSocketReference) it.skip(webSocketReferenceSkipReason, () => undefined);
});
