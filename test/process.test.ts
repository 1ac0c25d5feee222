import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BASE_ENV, b64, ServerProcess } from './support/server-process.js';

let server: ServerProcess;
let tmp: string;

describe.each(['never', 'always'] as const)('pipe children started with EXEC_SERVER_SPAWNER=%s', (mode) => {
  beforeAll(async () => {
    server = await ServerProcess.started([], { ...process.env, EXEC_SERVER_SPAWNER: mode });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-test-'));
  });
  afterAll(async () => {
    await server.dispose();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  let counter = 0;
  const id = () => `p${++counter}`;

  const run = (argv: string[], extra = {}) => server.runToClose(id(), argv, extra);

  describe('process/start (§3.2)', () => {
    it('runs with exactly the given env, nothing inherited', async () => {
      const { output } = await run(['/usr/bin/env'], { env: { ONLY: 'this', 'WITH=EQ': 'a=b', UNI: 'é' } });
      expect(output.split('\n').filter(Boolean).sort()).toEqual(['ONLY=this', 'UNI=é', 'WITH=EQ=a=b'].sort());
      expect((await run(['/usr/bin/env'], { env: {} })).output).toBe('');
    });

    it('passes a large environment and odd arguments exactly', async () => {
      const env: Record<string, string> = { EMPTY: '', UNI: 'é—✓', EQ: '==' };
      for (let i = 0; i < 4000; i++) env[`LARGE_${i}`] = `value ${i} `.repeat(3);
      const { output } = await run(['/usr/bin/env', '-0'], { env });
      const entries = output.split('\0').filter(Boolean);
      expect(entries).toHaveLength(Object.keys(env).length);
      expect(Object.fromEntries(entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]))).toEqual(
        env,
      );
      const args = ['', ' spaced ', 'é', '-', '$HOME'];
      expect((await run(['/usr/bin/printf', '[%s]', ...args])).output).toBe(args.map((arg) => `[${arg}]`).join(''));
    });

    it('resolves bare names in env.PATH, else the server PATH (pipe mode)', async () => {
      expect((await run(['echo', 'hi'], { env: {} })).output).toBe('hi\n');
      expect((await run(['echo', 'hi'])).output).toBe('hi\n');
    });

    it('uses cwd, resolving relative paths against the server cwd', async () => {
      expect((await run(['pwd'], { cwd: tmp })).output).toBe(`${tmp}\n`);
      expect((await run(['/bin/pwd'], { cwd: '.' })).output).toBe(`${process.cwd()}\n`);
    });

    it('sets argv[0] from arg0 but runs argv[0]', async () => {
      expect((await run(['bash', '-c', 'echo $0'], { arg0: 'custom-name' })).output).toBe('custom-name\n');
    });

    it('numbers output, exit and close from one seq counter, in order', async () => {
      const { events, exitCode } = await run(['sh', '-c', 'echo out; echo err >&2; exit 7']);
      expect(exitCode).toBe(7);
      expect(events.map((e) => e.params.seq)).toEqual(events.map((_, i) => i + 1));
      expect(events.at(-1)!.method).toBe('process/closed');
      const streams = events.filter((e) => e.method === 'process/output').map((e) => e.params.stream);
      expect(streams.sort()).toEqual(['stderr', 'stdout']);
      const exitedAt = events.findIndex((e) => e.method === 'process/exited');
      expect(exitedAt).toBeGreaterThanOrEqual(0);
      expect(exitedAt).toBeLessThan(events.length - 1);
    });

    it('reports exit codes: n, and -1 for a signal death in pipe mode', async () => {
      expect((await run(['sh', '-c', 'exit 256'])).exitCode).toBe(0);
      expect((await run(['sh', '-c', 'kill -TERM $$'])).exitCode).toBe(-1);
    });

    it(`starts children from ${mode === 'always' ? 'the spawner' : 'the server'}`, async () => {
      const parent = Number((await run(['sh', '-c', 'echo $PPID'])).output);
      const parentArgv0 = fs.readFileSync(`/proc/${parent}/cmdline`, 'latin1').split('\0')[0];
      if (mode === 'never') expect(parent).toBe(server.child.pid);
      else expect(parentArgv0).toMatch(/perl$/);
    });

    it('rejects bad starts with the reference codes and messages, leaving no entry', async () => {
      const start = (argv: string[], extra = {}) =>
        server.error('process/start', { processId: 'bad', argv, cwd: '/tmp', env: BASE_ENV, tty: false, ...extra });
      expect(await start([])).toEqual({ code: -32602, message: 'argv must not be empty' });
      expect(await start(['/no/such/program'])).toEqual({ code: -32603, message: 'No such file or directory (os error 2)' });
      expect(await start(['no-such-program-xyz'])).toEqual({ code: -32603, message: 'No such file or directory (os error 2)' });
      expect(await start(['/tmp'])).toEqual({ code: -32603, message: 'Permission denied (os error 13)' });
      expect(await start(['true'], { cwd: '/no/such/dir' })).toEqual({ code: -32603, message: 'No such file or directory (os error 2)' });
      expect(await start(['true'], { cwd: '/etc/passwd' })).toEqual({ code: -32603, message: 'Not a directory (os error 20)' });
      expect(await start([''])).toEqual({ code: -32603, message: 'missing program for pipe spawn' });
      expect(await start(['echo', 'a\u0000b'])).toEqual({ code: -32603, message: 'nul byte found in provided data' });
      const script = path.join(tmp, 'noformat');
      fs.writeFileSync(script, 'echo hi\n', { mode: 0o755 });
      expect(await start([script])).toEqual({ code: -32603, message: 'Exec format error (os error 8)' });
      // Only exec itself can tell: one argument over the kernel's 128 KiB limit.
      expect(await start(['true', 'x'.repeat(200_000)])).toEqual({ code: -32603, message: 'Argument list too long (os error 7)' });
      expect(await start(['true'], { envPolicy: { inherit: 'all' } })).toEqual({
        code: -32602,
        message: 'envPolicy: missing field `ignoreDefaultExcludes`',
      });
      // The failed id is free again.
      await server.start('bad', ['true']);
      await server.waitClosed('bad');
    });

    it('rejects a duplicate id before spawning, also while retained after close', async () => {
      const processId = id();
      await server.start(processId, ['true']);
      expect(await server.error('process/start', { processId, argv: ['true'], cwd: '/nope', env: {}, tty: false })).toEqual({
        code: -32600,
        message: `process ${processId} already exists`,
      });
      await server.waitClosed(processId);
      expect((await server.error('process/start', { processId, argv: ['true'], cwd: '/', env: {}, tty: false })).message).toBe(
        `process ${processId} already exists`,
      );
    });

    it('accepts any string as a process id', async () => {
      for (const processId of ['', 'with space/slash', 'é\nnewline']) {
        expect(await server.start(processId, ['true'])).toEqual({ processId });
        await server.waitClosed(processId);
      }
    });
  });

  describe('process/read (§3.4)', () => {
    it('selects by afterSeq and maxBytes, never splitting chunks', async () => {
      // Three chunks, whatever the load: each printed only once the one before has reached us.
      const processId = id();
      await server.start(processId, ['sh', '-c', 'printf aaaa; read x; printf bbbb; read x; printf cccc'], { pipeStdin: true });
      for (const seq of [1, 2]) {
        await server.waitFor((m) => m.method === 'process/output' && m.params.processId === processId && m.params.seq === seq);
        await server.request('process/write', { processId, chunk: b64('\n') });
      }
      await server.waitClosed(processId);
      const all = await server.request('process/read', { processId });
      expect(all.chunks.map((c: any) => Buffer.from(c.chunk, 'base64').toString())).toEqual(['aaaa', 'bbbb', 'cccc']);
      expect(all).toMatchObject({ nextSeq: 4, exited: true, exitCode: 0, closed: true, failure: null });
      const first = await server.request('process/read', { processId, maxBytes: 0 });
      expect(first.chunks).toHaveLength(1);
      expect(first.nextSeq).toBe(2);
      const two = await server.request('process/read', { processId, maxBytes: 9 });
      expect(two.chunks).toHaveLength(2);
      const rest = await server.request('process/read', { processId, afterSeq: 3 });
      expect(rest).toMatchObject({ chunks: [], nextSeq: 6, closed: true });
    });

    it('long-polls until output arrives, and times out with the current state', async () => {
      const processId = id();
      await server.start(processId, ['sh', '-c', 'read x; echo "$x"'], { pipeStdin: true });
      const started = Date.now();
      const timedOut = await server.request('process/read', { processId, waitMs: 200 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
      expect(timedOut).toMatchObject({ chunks: [], nextSeq: 1, exited: false, closed: false });
      const pending = server.request('process/read', { processId, waitMs: 10_000 });
      await server.request('process/write', { processId, chunk: b64('hello\n') });
      const woken = await pending;
      expect(Buffer.from(woken.chunks[0].chunk, 'base64').toString()).toBe('hello\n');
      await server.waitClosed(processId);
    });

    it('keeps answering other requests while a long-poll is pending (EXT-CONCURRENCY)', async () => {
      const processId = id();
      await server.start(processId, ['sleep', '5']);
      let pollAnswered = false;
      const poll = server.call('process/read', { processId, waitMs: 3000 }).finally(() => (pollAnswered = true));
      await server.request('process/read', { processId });
      await server.request('environment/info');
      expect(pollAnswered).toBe(false); // both answered first, though sent after it
      expect(await server.request('process/terminate', { processId })).toEqual({ running: true });
      const response = await poll;
      expect(response.result.exited).toBe(true);
      await server.waitClosed(processId);
    });

    it('returns at once after exit when afterSeq is behind', async () => {
      const { processId } = await run(['true']);
      const result = await server.request('process/read', { processId, afterSeq: 0, waitMs: 5000 });
      expect(result).toMatchObject({ chunks: [], nextSeq: 3, exited: true, exitCode: 0, closed: true });
    });

    it('keeps the last 1 MiB of output in whole chunks', async () => {
      const { processId } = await run(['head', '-c', String(3 * 1024 * 1024), '/dev/zero']);
      expect(server.output(processId).length).toBe(3 * 1024 * 1024);
      const retained = await server.request('process/read', { processId });
      const bytes = retained.chunks.reduce((n: number, c: any) => n + Buffer.from(c.chunk, 'base64').length, 0);
      expect(bytes).toBeLessThanOrEqual(1024 * 1024);
      expect(bytes).toBeGreaterThan(1024 * 1024 - 70_000);
      const seqs = retained.chunks.map((c: any) => c.seq);
      expect(seqs.at(-1)).toBe(
        server
          .notifications(processId)
          .filter((m) => m.method === 'process/output')
          .at(-1)!.params.seq,
      );
    });

    it('rejects unknown ids', async () => {
      expect(await server.error('process/read', { processId: 'missing', waitMs: 100 })).toEqual({
        code: -32600,
        message: 'unknown process id missing',
      });
    });
  });

  describe('process/write (§3.5, EXT-CLOSESTDIN)', () => {
    it.each([false, true])(
      'delivers input written after the exit to a job that still reads it, until closed (tty: %s), as the reference',
      async (tty) => {
        const processId = id();
        // The leader exits at once; the job it leaves reads the stdin (or terminal) it shares.
        // (A job's stdin is /dev/null unless redirected: it reads the shell's through fd 3.)
        // The hang-up at the leader's exit is ignored from before the job is forked, so it cannot come first.
        const job = tty ? "trap '' HUP; (read x <&3; echo got:$x) &" : 'cat <&3 &';
        await server.start(processId, ['sh', '-c', `exec 3<&0; ${job} exit 0`], tty ? { tty: true } : { pipeStdin: true });
        await server.waitExited(processId);
        expect(await server.request('process/write', { processId, chunk: b64('hello\n') })).toEqual({ status: 'accepted' });
        const expected = tty ? 'got:hello' : 'hello';
        await vi.waitFor(() => expect(server.output(processId).toString()).toContain(expected), { timeout: 10_000 });
        if (!tty) await server.request('process/write', { processId, chunk: '', closeStdin: true }); // cat ends at EOF
        await server.waitClosed(processId);
      },
    );

    it('writes in order, closes stdin on request, then reports stdinClosed', async () => {
      const processId = id();
      await server.start(processId, ['cat'], { pipeStdin: true });
      for (const part of ['one ', 'two ', 'three']) {
        expect(await server.request('process/write', { processId, chunk: b64(part) })).toEqual({ status: 'accepted' });
      }
      expect(await server.request('process/write', { processId, chunk: '', closeStdin: true })).toEqual({ status: 'accepted' });
      await server.waitClosed(processId);
      expect(server.output(processId).toString()).toBe('one two three');
      expect(await server.request('process/write', { processId, chunk: b64('x') })).toEqual({ status: 'stdinClosed' });
    });

    it('writes a 3 MiB chunk intact (a line large enough for the large-line path)', async () => {
      const processId = id();
      await server.start(processId, ['sha256sum'], { pipeStdin: true });
      const data = Buffer.alloc(3 * 1024 * 1024);
      for (let i = 0; i < data.length; i += 4) data.writeUInt32LE((i * 2654435761) >>> 0, i);
      expect(await server.request('process/write', { processId, chunk: data.toString('base64'), closeStdin: true })).toEqual({
        status: 'accepted',
      });
      await server.waitClosed(processId);
      expect(server.output(processId).toString()).toBe(`${createHash('sha256').update(data).digest('hex')}  -\n`);
    });

    it('validates base64 strictly with the decoder text, even for unknown ids', async () => {
      const cases: Array<[string, string]> = [
        ['!!!notbase64', 'Invalid symbol 33, offset 0.'],
        ['aGk', 'Invalid padding'],
        ['aGk=\n', 'Invalid symbol 10, offset 4.'],
        ['a-_b', 'Invalid symbol 45, offset 1.'],
        ['a', 'Invalid input length: 1'],
        ['aGk==', 'Invalid symbol 61, offset 3.'],
        ['aR==', 'Invalid last symbol 82, offset 1.'],
        ['YQ==YQ==', 'Invalid symbol 61, offset 2.'],
        ['====', 'Invalid symbol 61, offset 0.'],
        ['éééé', 'Invalid symbol 195, offset 0.'],
      ];
      for (const [chunk, message] of cases) {
        expect(await server.error('process/write', { processId: 'nobody', chunk })).toEqual({ code: -32602, message });
      }
    });

    it('answers unknownProcess, stdinClosed without pipeStdin, and fails after terminate', async () => {
      expect(await server.request('process/write', { processId: 'nobody', chunk: '' })).toEqual({ status: 'unknownProcess' });
      const noStdin = id();
      await server.start(noStdin, ['sleep', '5']);
      expect(await server.request('process/write', { processId: noStdin, chunk: b64('x') })).toEqual({ status: 'stdinClosed' });
      const piped = id();
      await server.start(piped, ['sleep', '5'], { pipeStdin: true });
      expect(await server.request('process/terminate', { processId: piped })).toEqual({ running: true });
      expect(await server.error('process/write', { processId: piped, chunk: b64('x') })).toEqual({
        code: -32603,
        message: 'failed to write to process stdin',
      });
      await server.request('process/terminate', { processId: noStdin });
      await Promise.all([server.waitClosed(noStdin), server.waitClosed(piped)]);
    });

    it('accepts and discards writes after a natural exit', async () => {
      const { processId } = await run(['true'], { pipeStdin: true });
      expect(await server.request('process/write', { processId, chunk: b64('late') })).toEqual({ status: 'accepted' });
    });
  });
});
