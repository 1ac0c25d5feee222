/**
 * Sessions that survive a dropped WebSocket connection, on the wire, through
 * the real CLI: a cut connection's session is detached (its processes keep
 * running, nothing they print is lost), a new connection resumes it with
 * `initialize.resumeSessionId`, and a session nobody resumes in time is ended
 * (its processes dead, checked through /proc). A clean close ends it at once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findByCmdline, isAlive, waitDead, waitFound } from './support/proc.js';
import { CLI } from './support/server-process.js';
import { startWebSocketListener, type WebSocketListener } from './support/websocket-server.js';
import { type RpcAnswer, WsRpc } from './support/ws-rpc.js';

let long: WebSocketListener; // sessions wait 60 s
let short: WebSocketListener; // sessions wait 300 ms

const listen = (ttlMs: number) =>
  startWebSocketListener(process.execPath, [
    CLI,
    '--listen',
    'ws://127.0.0.1:0',
    '--detached-session-ttl-ms',
    String(ttlMs),
    '--log-level',
    'info',
  ]);

beforeAll(async () => {
  [long, short] = await Promise.all([listen(60_000), listen(300)]);
});
afterAll(async () => {
  await Promise.all([long.stop(), short.stop()]);
});

async function connect(url: string): Promise<{ rpc: WsRpc; sessionId: string }> {
  const rpc = await WsRpc.open(url);
  const answer = await rpc.initialize();
  return { rpc, sessionId: answer.result.sessionId };
}

/**
 * Resumes `sessionId` on a new connection. The server learns of a cut
 * connection a moment after the client does; until then it answers −32010,
 * which real clients retry (as this does).
 */
async function resume(url: string, sessionId: string): Promise<{ rpc: WsRpc; answer: RpcAnswer }> {
  for (;;) {
    const rpc = await WsRpc.open(url);
    const answer = await rpc.initialize(sessionId);
    if (answer.error?.code !== -32010) return { rpc, answer };
    await rpc.close();
  }
}

const start = (rpc: WsRpc, processId: string, argv: string[]) =>
  rpc.request('process/start', { processId, argv, cwd: 'file:///tmp', env: { PATH: '/usr/bin:/bin' }, tty: false, arg0: null });

/** Polls /proc until `pid` is gone or sleeps writing to a full pipe (the kernel offers no event for either). */
async function waitBlockedOrGone(pid: number): Promise<void> {
  const wchan = () => {
    try {
      return fs.readFileSync(`/proc/${pid}/wchan`, 'latin1');
    } catch {
      return '';
    }
  };
  while (isAlive(pid) && !wchan().includes('pipe_write')) await new Promise((resolve) => setTimeout(resolve, 10));
}

/**
 * Everything the process printed, as a client that resumed gets it: the
 * notifications the new connection receives, and `process/read` with
 * `afterSeq` for what went by while no connection was attached. Chunks are
 * keyed by seq, so a chunk seen both ways counts once.
 */
async function readAll(rpc: WsRpc, processId: string): Promise<{ text: string; seqs: number[] }> {
  const chunks = new Map<number, Buffer>();
  const take = (seq: number, base64: string) => chunks.set(seq, Buffer.from(base64, 'base64'));
  let closedNotified = false;
  for (;;) {
    for (const { method, params } of rpc.notifications.splice(0)) {
      if (params?.processId !== processId) continue;
      if (method === 'process/output') take(params.seq, params.chunk);
      if (method === 'process/closed') closedNotified = true;
    }
    let afterSeq = 0;
    while (chunks.has(afterSeq + 1)) afterSeq++;
    const { result } = await rpc.request('process/read', { processId, afterSeq, waitMs: 2000 });
    for (const chunk of result.chunks) take(chunk.seq, chunk.chunk);
    // Done once closed was both read and notified: every output notification came before the closed one.
    if (result.closed && closedNotified) {
      const seqs = [...chunks.keys()].sort((a, b) => a - b);
      return { text: Buffer.concat(seqs.map((seq) => chunks.get(seq)!)).toString(), seqs };
    }
  }
}

describe('resuming a session over WebSocket', () => {
  it('gives a cut connection’s processes back to the connection that resumes it, refusing a second holder', async () => {
    const { rpc, sessionId } = await connect(long.url);
    expect((await start(rpc, 'p', ['sh', '-c', 'echo before; exec sleep 30.95'])).result).toBeDefined();
    await rpc.request('process/start', {
      processId: 'stdin',
      argv: ['cat'],
      cwd: 'file:///tmp',
      env: {},
      tty: false,
      pipeStdin: true,
      arg0: null,
    });
    // While the first connection holds it, nobody else may take the session.
    const intruder = await WsRpc.open(long.url);
    expect((await intruder.initialize(sessionId)).error).toEqual({
      code: -32010,
      message: `session ${sessionId} is already attached to another connection`,
    });
    // A failed resume does not use up the connection's one initialize.
    expect((await intruder.initialize()).result.sessionId).not.toBe(sessionId);
    await intruder.close();
    await rpc.cut();

    const unknown = await WsRpc.open(long.url);
    expect((await unknown.initialize('no-such-session')).error).toEqual({ code: -32600, message: 'unknown session id no-such-session' });
    await unknown.close();

    const { rpc: resumed, answer } = await resume(long.url, sessionId);
    expect(answer.result.sessionId).toBe(sessionId);
    // Before this connection shows its generation itself, it answers in the session's (2: file:// URIs were sent).
    await resumed.request('process/terminate', { processId: 'p' });
    const terminated = await readAll(resumed, 'p');
    expect(terminated.text).toBe('before\n');
    expect((await resumed.request('process/read', { processId: 'p', afterSeq: 0 })).result).toMatchObject({ exitCode: 137 });
    // The same processes: a process id still in use, writes reach the same stdin.
    expect((await start(resumed, 'p', ['true'])).error?.message).toBe('process p already exists');
    const write = await resumed.request('process/write', { processId: 'p', chunk: Buffer.from('x\n').toString('base64'), writeId: 'w1' });
    expect(write.result).toEqual({ status: 'stdinClosed' });
    await resumed.request('process/write', { processId: 'stdin', chunk: Buffer.from('one\n').toString('base64'), writeId: 'w1' });
    // A retried write (same writeId) is applied once.
    await resumed.request('process/write', { processId: 'stdin', chunk: Buffer.from('one\n').toString('base64'), writeId: 'w1' });
    await resumed.request('process/write', { processId: 'stdin', chunk: '', closeStdin: true, writeId: 'w2' });
    expect((await readAll(resumed, 'stdin')).text).toBe('one\n');
    await resumed.close();
  });

  it('loses no output printed while the session waited, beyond what a process may keep', async () => {
    const { rpc, sessionId } = await connect(long.url);
    const go = path.join(os.tmpdir(), `resume-go-${process.pid}`);
    // About 2.6 MiB, more than the 1 MiB a process keeps, all printed while detached:
    // a detached session must stop reading its children, not evict what nobody read.
    await start(rpc, 'big', ['sh', '-c', `while [ ! -e ${go} ]; do sleep 0.01; done; rm ${go}; seq 1 350000`]);
    await rpc.cut();
    await long.output(new RegExp(`session ${sessionId.slice(0, 8)}… detached`));
    fs.writeFileSync(go, '');
    // Resume only once the output is out of the process: printed in full, or stuck on a full pipe.
    const [seq] = await waitFound('350000', 'seq');
    if (seq !== undefined) await waitBlockedOrGone(seq);
    const { rpc: resumed } = await resume(long.url, sessionId);
    const { text, seqs } = await readAll(resumed, 'big');
    // Output waiting in the paused pipe comes only after the answer that resumed the session.
    expect(resumed.received[0]).toMatchObject({ id: 1 });
    expect(text).toBe(`${Array.from({ length: 350_000 }, (_, index) => index + 1).join('\n')}\n`);
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
    await resumed.close();
  });

  it('ends a session nobody resumes within the window, killing its processes', async () => {
    const { rpc, sessionId } = await connect(short.url);
    await start(rpc, 'sleeper', ['sleep', '30.961']); // a marker no other test uses
    const [pid] = await waitFound('30.961', 'sleep');
    await rpc.cut();
    expect(await waitDead([pid!])).toEqual([]);
    const late = await WsRpc.open(short.url);
    expect((await late.initialize(sessionId)).error).toEqual({ code: -32600, message: `unknown session id ${sessionId}` });
    await late.close();
  });

  it('ends the session at once when the client closes cleanly', async () => {
    const { rpc, sessionId } = await connect(long.url);
    await start(rpc, 'sleeper', ['sleep', '30.94']);
    const [pid] = await waitFound('30.94', 'sleep');
    await rpc.close();
    expect(await waitDead([pid!])).toEqual([]);
    const late = await WsRpc.open(long.url);
    expect((await late.initialize(sessionId)).error?.message).toBe(`unknown session id ${sessionId}`);
    await late.close();
    expect(findByCmdline('30.94', 'sleep')).toEqual([]);
  });

  it('keeps the session of a connection cut while its process prints (10 rounds)', async () => {
    for (let round = 0; round < 10; round++) {
      const { rpc, sessionId } = await connect(long.url);
      await start(rpc, 'chatty', ['sh', '-c', 'while :; do echo tick; done']);
      // Cut once output flows: the server is writing to the socket when it goes.
      while (rpc.notifications.length < 3) await new Promise((resolve) => setTimeout(resolve, 1));
      await rpc.cut();
      const { rpc: resumed, answer } = await resume(long.url, sessionId);
      expect(answer.result?.sessionId, `round ${round}: ${JSON.stringify(answer.error)}`).toBe(sessionId);
      await resumed.request('process/terminate', { processId: 'chatty' });
      await resumed.close();
    }
  });

  it('keeps closed processes readable while the session waits, however short the retention', async () => {
    const listener = await startWebSocketListener(process.execPath, [CLI, '--listen', 'ws://127.0.0.1:0', '--retention-ms', '50']);
    try {
      const { rpc, sessionId } = await connect(listener.url);
      await start(rpc, 'quick', ['sh', '-c', 'echo done; exit 3']);
      // Closed just before the drop (a client may lose those notifications in flight) ...
      while (!rpc.notifications.some((message) => message.method === 'process/closed'))
        await new Promise((resolve) => setTimeout(resolve, 5));
      await rpc.cut();
      // ... and its retention passes while nobody is attached.
      await new Promise((resolve) => setTimeout(resolve, 150));
      const { rpc: resumed } = await resume(listener.url, sessionId);
      expect((await resumed.request('process/read', { processId: 'quick', afterSeq: 0, waitMs: 2000 })).result).toMatchObject({
        exitCode: 3,
        closed: true,
      });
      await resumed.close();
    } finally {
      await listener.stop();
    }
  });

  it('waits for a resume after a close a proxy may send (1001), and ends at once after one for a protocol error (1003)', async () => {
    const { rpc, sessionId } = await connect(long.url);
    await rpc.close(1001);
    const { rpc: resumed, answer } = await resume(long.url, sessionId);
    expect(answer.result.sessionId).toBe(sessionId);
    const closed = resumed.closed;
    resumed.sendBinary();
    expect(await closed).toBe(1003);
    const late = await WsRpc.open(long.url);
    expect((await late.initialize(sessionId)).error?.message).toBe(`unknown session id ${sessionId}`);
    await late.close();
  });

  it('ends the session at once after a frame ws refuses (invalid UTF-8), its processes killed', async () => {
    const { rpc, sessionId } = await connect(long.url);
    await start(rpc, 'kept', ['sleep', '60.17']);
    const sleeper = await waitFound('60.17', 'sleep');
    const closed = rpc.closed;
    rpc.sendText(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
    expect(await closed).toBe(1007);
    expect(await waitDead(sleeper)).toEqual([]);
    const late = await WsRpc.open(long.url);
    expect((await late.initialize(sessionId)).error?.message).toBe(`unknown session id ${sessionId}`);
    await late.close();
  });
});
