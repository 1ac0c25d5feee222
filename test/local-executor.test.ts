/** LocalExecutor runs a server session inside this process: nothing starts until it is used, and close() ends it all. */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createExecutor, ExecServerError, LocalExecutor, ProcessRuntime } from '../src/index.js';
import { childrenOf, isAlive, waitDead, waitFound } from './support/proc.js';

const ENV = { PATH: '/usr/bin:/bin' };
const here = path.dirname(fileURLToPath(import.meta.url));
const shipped = path.resolve(here, '../dist/index.js');

describe('LocalExecutor', () => {
  it('starts no process when constructed, only on first use, and leaves none after close', async () => {
    const before = childrenOf(process.pid);
    const executor = await createExecutor();
    expect(executor).toBeInstanceOf(LocalExecutor);
    // None new (one an earlier file left in this worker may still be on its way out).
    expect(childrenOf(process.pid).filter((pid) => !before.includes(pid))).toEqual([]);
    const closed = new Promise<void>((resolve) => executor.onEvent((_id, event) => event.type === 'closed' && resolve()));
    await executor.start({ processId: 'lazy', argv: ['true'], cwd: '/tmp', env: ENV, tty: false });
    await closed;
    const started = childrenOf(process.pid).filter((pid) => !before.includes(pid));
    expect(started.length).toBeGreaterThan(0); // the guardian (and the spawner when perl is there)
    await executor.close();
    expect(await waitDead(started)).toEqual([]);
  });

  it('refuses options it would ignore, naming them: createExecutor picks its way from url, command or streams', async () => {
    await expect(createExecutor({ args: ['host', 'exec-server'] })).rejects.toThrow('createExecutor: args applies only with command');
    await expect(createExecutor({ command: 'exec-server', token: 'x' })).rejects.toThrow('createExecutor: token applies only with url');
    await expect(createExecutor({ command: 'exec-server', reconnect: true })).rejects.toThrow(
      'createExecutor: reconnect applies only with url',
    );
    await expect(createExecutor({ url: 'ws://127.0.0.1:1', env: {} })).rejects.toThrow('createExecutor: env applies only with command');
    await expect(createExecutor({ protocolGeneration: 1 })).rejects.toThrow(
      'createExecutor: protocolGeneration needs url, command or streams (without them the executor is local)',
    );
    await expect(createExecutor({ url: 'ws://x', command: 'y' })).rejects.toThrow(TypeError);
  });

  it('reads files without limit on their total: no line writer sends its answers, so none are held back', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'local-executor-reads-'));
    const file = path.join(dir, 'mebibyte');
    fs.writeFileSync(file, randomBytes(1024 * 1024));
    const executor = new LocalExecutor();
    try {
      // Past the 64 MiB a server holds in answers its client has not taken (answer-budget.ts).
      for (let i = 0; i < 70; i++) expect((await executor.readFile(file)).length).toBe(1024 * 1024);
    } finally {
      await executor.close();
      fs.rmSync(dir, { recursive: true });
    }
  });

  it('hands listeners output chunks to keep: a flood does not overwrite them (the session reuses its memory)', async () => {
    const data = Buffer.from(randomBytes(2 * 1024 * 1024).toString('hex'));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'local-executor-flood-'));
    fs.writeFileSync(path.join(dir, 'data'), data);
    const executor = new LocalExecutor();
    try {
      const kept: Buffer[] = [];
      const closed = new Promise<void>((resolve) =>
        executor.onEvent((_id, event) => {
          if (event.type === 'output') kept.push(event.chunk);
          if (event.type === 'closed') resolve();
        }),
      );
      await executor.start({ processId: 'flood', argv: ['cat', path.join(dir, 'data')], cwd: '/tmp', env: ENV, tty: false });
      await closed;
      const output = Buffer.concat(kept);
      expect(output.length).toBe(data.length);
      expect(output.equals(data)).toBe(true);
    } finally {
      await executor.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('goes through the server dispatcher: params decoding and the protocol errors', async () => {
    const executor = new LocalExecutor();
    try {
      await expect(executor.start({ processId: 'x', argv: [], cwd: '/tmp', env: ENV, tty: false })).rejects.toMatchObject({
        code: -32602,
        message: 'argv must not be empty',
      });
      await expect(executor.readFile('relative')).rejects.toBeInstanceOf(ExecServerError);
      await expect(executor.read({ processId: 'nope' })).rejects.toMatchObject({ code: -32600, message: 'unknown process id nope' });
    } finally {
      await executor.close();
    }
  });

  it('shares a runtime passed in, and leaves it running on close', async () => {
    const before = childrenOf(process.pid);
    const runtime = new ProcessRuntime();
    const first = new LocalExecutor({ runtime });
    const second = new LocalExecutor({ runtime });
    try {
      for (const executor of [first, second]) {
        const closed = new Promise<void>((resolve) => executor.onEvent((_id, event) => event.type === 'closed' && resolve()));
        await executor.start({ processId: 'p', argv: ['true'], cwd: '/tmp', env: ENV, tty: false });
        await closed;
      }
      const helpers = childrenOf(process.pid).filter((pid) => !before.includes(pid));
      expect(helpers.length).toBeGreaterThan(0);
      await first.close();
      expect(helpers.filter(isAlive)).toEqual(helpers);
      const closed = new Promise<void>((resolve) => second.onEvent((_id, event) => event.type === 'closed' && resolve()));
      await second.start({ processId: 'q', argv: ['true'], cwd: '/tmp', env: ENV, tty: false });
      await closed;
      await second.close();
      expect(helpers.filter(isAlive)).toEqual(helpers);
      runtime.stop();
      expect(await waitDead(helpers)).toEqual([]);
    } finally {
      await second.close();
      runtime.stop();
    }
  });

  // The host's descriptor is a pipe whose far end the test reads: EOF comes only once no process holds it.
  it.skipIf(!fs.existsSync(shipped))(
    "keeps a host's descriptors that lack close-on-exec from its children, pipe and PTY, and from its guardian",
    async () => {
      const fixture = path.join(here, 'fixtures/host/holds-descriptor.mjs');
      const host = spawn('/bin/bash', ['-c', 'exec "$0" "$1" 99>&3 3>&-', process.execPath, fixture], {
        stdio: ['pipe', 'pipe', 'inherit', 'pipe'],
      });
      const exited = new Promise((resolve) => host.once('exit', resolve));
      try {
        const heldPipe = host.stdio[3] as Readable;
        const released = new Promise((resolve) => heldPipe.once('end', resolve));
        heldPipe.resume();
        let line = '';
        for await (const chunk of host.stdout) {
          line += chunk;
          if (line.endsWith('\n')) break;
        }
        const { heldFlags, ...seen } = JSON.parse(line);
        expect(Number.parseInt(heldFlags, 8) & 0o2000000).toBe(0); // no close-on-exec
        expect(seen).toEqual({ pipe: [0, 1, 2], tty: [0, 1, 2] });
        // The host closed its copy with a child on pipes and one on a PTY still running.
        await released;
        // Both still run (the PTY one may be between perl's last close and its exec: polled).
        expect(await waitFound(`60.${host.pid}`, 'sleep', 2)).toHaveLength(2);
      } finally {
        host.stdin.end();
        await exited;
      }
    },
  );
});
