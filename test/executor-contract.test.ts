/** One contract, every executor: behaviour cannot drift between local and remote. */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createExecutor, ExecServerClient, ExecServerError, type Executor, type ProcessEvent, RemoteExecutor } from '../src/index.js';
import { findBwrap } from '../src/server/sandbox/bwrap.js';
import { executorKinds, hasWebSocketReference, webSocketReferenceKinds, webSocketReferenceSkipReason } from './support/executors.js';
import { workspaceWrite } from './support/sandbox-policy.js';
import { listenOurs } from './support/websocket-server.js';
import { findByCmdline, waitDead } from './support/proc.js';

const ENV = { PATH: '/usr/bin:/bin' };

// Our kinds, and Codex 0.169.0 over WebSocket when installed (`reference`: without our extensions).
const kinds = [...executorKinds, ...webSocketReferenceKinds()];
if (!hasWebSocketReference) it.skip(`Executor contract over Codex's WebSocket listener: ${webSocketReferenceSkipReason}`, () => undefined);

describe.each(kinds)('Executor contract: $name', ({ create, reference = false }) => {
  let executor: Executor;
  const events = new Map<string, ProcessEvent[]>();
  const closedWaiters = new Map<string, () => void>();
  let dir: string;
  let n = 0;
  const id = () => `c${++n}`;

  beforeAll(async () => {
    executor = await create();
    executor.onEvent((processId, event) => {
      const list = events.get(processId) ?? [];
      list.push(event);
      events.set(processId, list);
      if (event.type === 'closed') closedWaiters.get(processId)?.();
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'executor-contract-'));
  });
  afterAll(async () => {
    await executor.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function runToClose(argv: string[], extra: Record<string, unknown> = {}) {
    const processId = id();
    const closed = new Promise<void>((resolve) => closedWaiters.set(processId, resolve));
    await executor.start({ processId, argv, cwd: '/tmp', env: ENV, tty: false, ...extra });
    await closed;
    return { processId, list: events.get(processId)! };
  }
  const outputOf = (processId: string) =>
    Buffer.concat((events.get(processId) ?? []).flatMap((e) => (e.type === 'output' ? [e.chunk] : []))).toString();

  it('gives the directories of the machine as native paths, whatever the generation', async () => {
    const info = await executor.environmentInfo();
    expect([info.cwd, info.userHomeDir, info.tempDir].filter((dir) => !dir.startsWith('/'))).toEqual([]);
  });

  it('numbers output, exit and close in seq order', async () => {
    const { list } = await runToClose(['sh', '-c', 'echo a; echo b >&2; exit 4']);
    expect(list.map((e) => ('seq' in e ? e.seq : -1))).toEqual(list.map((_, i) => i + 1));
    expect(list.at(-1)).toEqual({ type: 'closed', seq: list.length });
    expect(list.find((e) => e.type === 'exited')).toMatchObject({ exitCode: 4 });
  });

  it('passes envPolicy and a sandbox policy through to the server', async () => {
    const policy = { inherit: 'none', ignoreDefaultExcludes: false, exclude: [], set: { FROM_POLICY: 'policy' }, includeOnly: [] };
    const built = await runToClose(['sh', '-c', 'echo "$FROM_POLICY-$X"'], { env: { PATH: ENV.PATH, X: 'env' }, envPolicy: policy });
    expect(outputOf(built.processId)).toBe('policy-env\n');
    await runToClose(['true'], { sandbox: null }); // null is no policy: a generation-1 server stays so (read's nextSeq below)
    if (reference || findBwrap(undefined) === undefined) return; // the reference's sandbox needs its own helper binaries
    const sandbox = workspaceWrite(dir);
    if (executor.protocolGeneration === 1) {
      const refused = executor.start({ processId: id(), argv: ['true'], cwd: dir, env: ENV, tty: false, sandbox });
      await expect(refused).rejects.toThrow('sandbox is not supported: protocol generation 1 has no sandbox policies');
      return;
    }
    const outside = fs.mkdtempSync(path.join(os.homedir(), '.executor-contract-'));
    try {
      const denied = await runToClose(['sh', '-c', `echo x > ${outside}/escaped`], { cwd: dir, sandbox });
      expect(outputOf(denied.processId)).toContain('Read-only file system');
      expect(fs.readdirSync(outside)).toEqual([]);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('retains output for read after close, with the read algorithm of §3.4', async () => {
    const { processId } = await runToClose(['printf', 'xyz']);
    const read = await executor.read({ processId });
    // Generation 1's nextSeq follows the last chunk returned, generation 2's the last event (exit and close included).
    const generation2 = executor.protocolGeneration === 2;
    expect(read).toMatchObject({ nextSeq: generation2 ? 4 : 2, exited: true, exitCode: 0, closed: true, failure: null });
    expect(read.chunks.map((c) => c.chunk.toString())).toEqual(['xyz']);
    expect((await executor.read({ processId, afterSeq: 1 })).nextSeq).toBe(4);
  });

  it('writes stdin, closes it, and reports write statuses', async () => {
    const processId = id();
    const closed = new Promise<void>((resolve) => closedWaiters.set(processId, resolve));
    await executor.start({ processId, argv: ['cat'], cwd: '/tmp', env: ENV, tty: false, pipeStdin: true });
    expect(await executor.write(processId, Buffer.from('in'), { closeStdin: true })).toBe('accepted');
    if (reference) {
      // closeStdin is our extension (the reference ignores it): end cat once its output is in.
      await vi.waitFor(() => expect(outputOf(processId)).toBe('in'), { timeout: 15_000 });
      expect(await executor.terminate(processId)).toBe(true);
    }
    await closed;
    expect(outputOf(processId)).toBe('in');
    if (reference) {
      // As ours answers a write after terminate (test/process.test.ts): the pipe is gone, not closed on request.
      await expect(executor.write(processId, Buffer.from('x'))).rejects.toMatchObject({
        code: -32603,
        message: 'failed to write to process stdin',
      });
    } else {
      expect(await executor.write(processId, Buffer.from('x'))).toBe('stdinClosed');
    }
    expect(await executor.write('nobody', Buffer.from('x'))).toBe('unknownProcess');
  });

  it('runs PTYs with a size and resizes them', async () => {
    const { processId } = await runToClose(['stty', 'size'], { tty: true, size: { rows: 33, cols: 99 } });
    // size is our extension: the reference ignores it and opens its PTYs at 24x80.
    expect(outputOf(processId)).toBe(reference ? '24 80\r\n' : '33 99\r\n');
  });

  it('terminates and signals process groups', async () => {
    const processId = id();
    const closed = new Promise<void>((resolve) => closedWaiters.set(processId, resolve));
    await executor.start({ processId, argv: ['sleep', '30'], cwd: '/tmp', env: ENV, tty: false });
    if (reference) {
      // Signals other than interrupt are our extension: the reference's enum has interrupt only.
      await expect(executor.signal(processId, 'SIGCONT')).rejects.toMatchObject({
        code: -32602,
        message: 'unknown variant `SIGCONT`, expected `interrupt`',
      });
    } else {
      await executor.signal(processId, 'SIGCONT');
    }
    expect(await executor.terminate(processId)).toBe(true);
    await closed;
    expect(await executor.terminate(processId)).toBe(false);
    // A SIGKILL death: 128 + 9 in generation 2, -1 in generation 1.
    expect(events.get(processId)!.find((e) => e.type === 'exited')).toMatchObject({
      exitCode: executor.protocolGeneration === 2 ? 137 : -1,
    });
  });

  it('streams files through the block methods, byte-exact, and walks trees with native paths', async () => {
    const data = randomBytes(5 * 1024 * 1024 + 17);
    const file = path.join(dir, 'streamed.bin');
    await pipeline(Readable.from([data.subarray(0, 3), data.subarray(3)]), executor.openWrite(file));
    expect(createHash('sha256').update(fs.readFileSync(file)).digest('hex')).toBe(createHash('sha256').update(data).digest('hex'));
    // Blocks of 300 KB are ordinary lines; blocks of 1 MiB (the default) take the large-line paths both ways.
    for (const options of [{ blockSize: 300_000 }, {}]) {
      const read: Buffer[] = [];
      for await (const part of executor.openRead(file, options)) read.push(part as Buffer);
      expect(Buffer.concat(read).equals(data)).toBe(true);
    }
    const whole = path.join(dir, 'whole.bin');
    await executor.writeFile(whole, data);
    expect((await executor.readFile(whole)).equals(data)).toBe(true);
    const walked = await executor.walk(dir, { maxDepth: 0 });
    expect(walked.entries).toContainEqual({ path: file, kind: 'file' });
    const missing = executor.openRead(path.join(dir, 'missing'));
    await expect(new Promise((_resolve, reject) => missing.on('error', reject))).rejects.toMatchObject({ code: -32004 });
  });

  it('fails with the same codes and messages', async () => {
    const failure = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (e: unknown) => e,
      );
    const empty = await failure(executor.start({ processId: id(), argv: [], cwd: '/tmp', env: ENV, tty: false }));
    expect(empty).toBeInstanceOf(ExecServerError);
    expect(empty).toMatchObject({ code: -32602, message: 'argv must not be empty' });
    expect(await failure(executor.read({ processId: 'nobody' }))).toMatchObject({ code: -32600, message: 'unknown process id nobody' });
    expect(await failure(executor.start({ processId: id(), argv: ['/no/such'], cwd: '/tmp', env: ENV, tty: false }))).toMatchObject({
      code: -32603,
      message: 'No such file or directory (os error 2)',
    });
    expect(await failure(executor.readFile(path.join(dir, 'missing')))).toMatchObject({ code: -32004 });
    expect(await failure(executor.getMetadata('relative'))).toMatchObject({ code: -32602 });
    // A plain-JS caller that leaves out env: refused, not filled in from this machine.
    const withoutEnv = { processId: id(), argv: ['true'], cwd: '/tmp', tty: false } as unknown as Parameters<Executor['start']>[0];
    expect(await failure(executor.start(withoutEnv))).toMatchObject({
      code: -32602,
      message: expect.stringContaining('missing field `env`'),
    });
  });

  it('hands every event to the other listeners when one throws, and reports the throw as uncaught', async () => {
    // The host's uncaught exceptions, caught here instead of by vitest for the while.
    const hostListeners = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    const uncaught: unknown[] = [];
    process.on('uncaughtException', (error) => uncaught.push(error));
    const stop = executor.onEvent(() => {
      throw new Error('listener bug');
    });
    try {
      const { list } = await runToClose(['sh', '-c', 'echo a; exit 2']);
      // The exit may be seen before the output is read: every event came, closed last.
      expect(list.map((e) => e.type).sort()).toEqual(['closed', 'exited', 'output']);
      expect(list.at(-1)?.type).toBe('closed');
      await vi.waitFor(() => expect(uncaught).toHaveLength(3), { timeout: 15_000 });
      expect(uncaught).toEqual(Array(3).fill(expect.objectContaining({ message: 'listener bug' })));
    } finally {
      stop();
      process.removeAllListeners('uncaughtException');
      for (const listener of hostListeners) process.on('uncaughtException', listener);
    }
  });

  it('reads, writes, lists, copies and removes files', async () => {
    const file = path.join(dir, 'f');
    await executor.writeFile(file, Buffer.from('data'));
    expect((await executor.readFile(file)).toString()).toBe('data');
    await executor.createDirectory(path.join(dir, 'sub', 'deeper'));
    await executor.copy(file, path.join(dir, 'sub', 'g'), { recursive: false });
    expect((await executor.readDirectory(path.join(dir, 'sub'))).map((e) => e.fileName).sort()).toEqual(['deeper', 'g']);
    expect(await executor.getMetadata(path.join(dir, 'sub'))).toMatchObject({ isDirectory: true, isSymlink: false });
    expect(await executor.canonicalize(path.join(dir, 'sub', '..', 'f'))).toBe(fs.realpathSync(file));
    await executor.remove(path.join(dir, 'sub'));
    expect(fs.existsSync(path.join(dir, 'sub'))).toBe(false);
  });
});

describe('createExecutor({ url, token })', () => {
  it('connects to the WebSocket listener at url (README, "Over WebSocket")', async () => {
    const listener = await listenOurs();
    try {
      // The WebSocket kinds above connect this way: it must not fall back to a LocalExecutor.
      const executor = await createExecutor({ url: listener.url, token: listener.token });
      await executor.close();
      expect(executor).toBeInstanceOf(RemoteExecutor);
    } finally {
      await listener.stop();
    }
  });
});

describe('RemoteExecutor on a client it does not own', () => {
  it('kills what it started on close, and leaves the client open', async () => {
    const client = await ExecServerClient.spawn({ clientName: 'borrowed' });
    try {
      const executor = new RemoteExecutor(client, false);
      const closed = new Promise<void>((resolve) => executor.onEvent((_processId, event) => event.type === 'closed' && resolve()));
      await executor.start({ processId: 'kept', argv: ['sleep', '30'], cwd: os.tmpdir(), env: ENV, tty: false });
      await executor.close();
      await closed;
      expect((await client.getMetadata('/')).isDirectory).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('kills what a start under way at close starts, and fails every call after close, as a LocalExecutor does', async () => {
    const client = await ExecServerClient.spawn({ clientName: 'borrowed-race' });
    try {
      const executor = new RemoteExecutor(client, false);
      const starting = executor.start({ processId: 'racing', argv: ['sleep', '30.771'], cwd: os.tmpdir(), env: ENV, tty: false });
      await executor.close();
      await expect(starting).rejects.toThrow('exec-server transport disconnected: the executor is closed');
      expect(await waitDead(findByCmdline('30.771', 'sleep'))).toEqual([]);
      const after = executor.start({ processId: 'after', argv: ['sleep', '30.772'], cwd: os.tmpdir(), env: ENV, tty: false });
      await expect(after).rejects.toThrow('the executor is closed');
      await expect(executor.getMetadata('/')).rejects.toThrow('the executor is closed');
      expect(findByCmdline('30.772', 'sleep')).toEqual([]);
      expect((await client.getMetadata('/')).isDirectory).toBe(true); // the client is not the executor's to close
    } finally {
      await client.close();
    }
  });
});
