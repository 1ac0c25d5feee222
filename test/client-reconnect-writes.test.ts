/**
 * Writes across a resumed session: a client that resumes another's session
 * writes on (its writeIds are its own), and a write in flight when the
 * connection dropped goes before one made while it was down.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecServerClient } from '../src/index.js';
import { type ReconnectRig, reconnectRig } from './support/reconnect-rig.js';

let rig: ReconnectRig;
beforeAll(async () => {
  rig = await reconnectRig();
});
afterAll(() => rig.close());

/** What `cat` echoed, read once it closed. */
async function echoed(client: ExecServerClient, processId: string): Promise<string> {
  let read = await client.readProcess(processId, { waitMs: 1000 });
  let text = '';
  for (;;) {
    text += Buffer.concat(read.chunks.map((chunk) => chunk.chunk)).toString();
    if (read.closed) return text;
    read = await client.readProcess(processId, { afterSeq: read.nextSeq - 1, waitMs: 1000 });
  }
}

describe('writes across a resumed session', () => {
  it('lets a second client that resumes the session write on: its writeIds are its own, not ones the server has seen', async () => {
    const first = await ExecServerClient.connectWebSocket(rig.proxy.url);
    const second = { client: undefined as ExecServerClient | undefined };
    try {
      const cat = await first.start({ argv: ['cat'], pipeStdin: true });
      for (const line of ['A1\n', 'A2\n']) expect(await cat.write(line)).toBe('accepted');
      await rig.goDown(first.sessionId);
      second.client = await ExecServerClient.connectWebSocket(rig.listener.url, { resumeSessionId: first.sessionId });
      for (const line of ['B1\n', 'B2\n', 'B3\n']) expect(await second.client.write(cat.processId, Buffer.from(line))).toBe('accepted');
      await second.client.write(cat.processId, Buffer.alloc(0), { closeStdin: true });
      expect(await echoed(second.client, cat.processId)).toBe('A1\nA2\nB1\nB2\nB3\n');
    } finally {
      rig.proxy.unblock();
      await second.client?.close();
      await first.close();
    }
  });

  it('sends a write in flight at the drop before one made while down, and that before one made once back', async () => {
    // Made as the client learns of the drop, before the write in flight has learnt it was cut off; and as it is back.
    let second: Promise<string> | undefined;
    let third: Promise<string> | undefined;
    const onReconnecting = () => {
      second ??= cat.write('two\n');
    };
    const onReconnected = () => {
      third ??= cat.write('three\n');
    };
    const client = await ExecServerClient.connectWebSocket(rig.proxy.url, { reconnect: { onReconnecting, onReconnected } });
    const cat = await client.start({ argv: ['cat'], pipeStdin: true });
    try {
      // Sent, but lost with the connection: it is sent again once resumed (it carries a writeId).
      rig.proxy.holdBack();
      const first = cat.write('one\n');
      await new Promise((resolve) => setImmediate(resolve));
      rig.proxy.cut();
      expect(await first).toBe('accepted');
      expect(await second).toBe('accepted');
      expect(await third).toBe('accepted');
      await cat.closeStdin();
      expect(await echoed(client, cat.processId)).toBe('one\ntwo\nthree\n');
    } finally {
      await client.close();
    }
  });

  it('goes on, the writes waiting for the resume sent, when onReconnected throws', async () => {
    let waiting: Promise<string> | undefined;
    const onReconnecting = () => {
      waiting ??= cat.write('two\n');
    };
    const onReconnected = () => {
      throw new Error('a bug in the host');
    };
    const client = await ExecServerClient.connectWebSocket(rig.proxy.url, { reconnect: { onReconnecting, onReconnected } });
    const cat = await client.start({ argv: ['cat'], pipeStdin: true });
    try {
      expect(await cat.write('one\n')).toBe('accepted');
      rig.proxy.cut();
      await expect.poll(() => waiting !== undefined).toBe(true);
      expect(await waiting).toBe('accepted');
      expect(await cat.write('three\n')).toBe('accepted');
      await cat.closeStdin();
      expect(await echoed(client, cat.processId)).toBe('one\ntwo\nthree\n');
    } finally {
      await client.close();
    }
  });
});
