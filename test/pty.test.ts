import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execedAs, settledFds, waitDead } from './support/proc.js';
import { b64, BASE_ENV, ServerProcess } from './support/server-process.js';

let server: ServerProcess;
beforeAll(async () => {
  server = await ServerProcess.started();
});
afterAll(async () => {
  await server.dispose();
});

let counter = 0;
const id = () => `t${++counter}`;
const startTty = (processId: string, argv: string[], extra = {}) => server.start(processId, argv, { tty: true, ...extra });

async function runTty(argv: string[], extra = {}) {
  const processId = id();
  await startTty(processId, argv, extra);
  await server.waitClosed(processId);
  const exited = server.notifications(processId).find((m) => m.method === 'process/exited')!;
  return { processId, output: server.output(processId).toString(), exitCode: exited.params.exitCode };
}

describe('PTY processes (§3.8)', () => {
  it('merges output as stream "pty" with CRLF and a 24x80 default size', async () => {
    const { processId, output } = await runTty(['sh', '-c', 'stty size; echo err >&2']);
    expect(output).toBe('24 80\r\nerr\r\n');
    expect(
      server
        .notifications(processId)
        .filter((m) => m.method === 'process/output')
        .every((m) => m.params.stream === 'pty'),
    ).toBe(true);
  });

  it('finds its end-of-output marker when the child turned on olcuc (no stray BEL, no 2 s wait)', async () => {
    const { output, exitCode } = await runTty(['sh', '-c', 'stty olcuc; echo done']);
    expect([output, exitCode]).toEqual(['DONE\r\n', 0]);
  });

  it('honours size on start and process/resize (EXT-RESIZE)', async () => {
    expect((await runTty(['stty', 'size'], { size: { rows: 40, cols: 120 } })).output).toBe('40 120\r\n');
    expect(
      await server.error('process/start', { processId: 'x', argv: ['true'], cwd: '/', env: {}, tty: true, size: { rows: 0, cols: 5 } }),
    ).toEqual({ code: -32602, message: 'size.rows and size.cols must be integers between 1 and 65535' });
    const processId = id();
    await startTty(processId, ['sh', '-c', 'trap "stty size" WINCH; echo ready; while :; do sleep 0.02; done']);
    await server.waitFor((m) => m.method === 'process/output' && m.params.processId === processId);
    expect(await server.request('process/resize', { processId, rows: 50, cols: 132 })).toEqual({});
    await server.waitFor(() => server.output(processId).toString().includes('50 132'));
    await server.request('process/terminate', { processId });
    await server.waitClosed(processId);
    // Resizing an exited (retained) process is a quiet no-op.
    expect(await server.request('process/resize', { processId, rows: 10, cols: 10 })).toEqual({});
  });

  it('batches a streaming terminal into large notifications, not one per 4 KiB read', async () => {
    const { processId, output } = await runTty(['head', '-c', String(1024 * 1024), '/dev/zero']);
    expect(output.length).toBe(1024 * 1024);
    const chunks = server.notifications(processId).filter((m) => m.method === 'process/output');
    // A terminal hands over at most 4 KiB per read: unbatched, this is 256 notifications.
    expect(chunks.length).toBeLessThan(100);
  });

  it('echoes input and runs the line discipline', async () => {
    const processId = id();
    await startTty(processId, ['cat']);
    await server.request('process/write', { processId, chunk: b64('hello\n') });
    await server.waitFor(() => server.output(processId).toString() === 'hello\r\nhello\r\n');
    await server.request('process/write', { processId, chunk: b64('\u0004') });
    await server.waitClosed(processId);
    expect(server.notifications(processId).find((m) => m.method === 'process/exited')!.params.exitCode).toBe(0);
  });

  it("starts with the reference's terminal settings: the byte 0xFF is data, not the end of a line", async () => {
    const { output } = await runTty(['stty', '-g']);
    expect(output).toMatch(/^500:5:bf:8a3b:3:1c:7f:15:4:0:1:0:11:13:1a:0:12:f:17:16:0:0(:0)*\r\n$/);
    const processId = id();
    await startTty(processId, ['sh', '-c', 'stty -echo; echo ready; dd bs=100 count=1 2>/dev/null | od -An -c']);
    await server.waitFor(() => server.output(processId).toString().includes('ready'));
    await server.request('process/write', { processId, chunk: Buffer.from('ab\xffcd\n', 'latin1').toString('base64') });
    await server.waitClosed(processId);
    // node-pty's own settings made 0xFF an end of line: dd got `a b 377` alone.
    expect(server.output(processId).toString().replace(/\s+/g, ' ')).toContain('a b 377 c d \\n');
  });

  it('sets no TERM, adds SHELL in name order (as the reference), and reports signal deaths as exit code 1', async () => {
    const { output } = await runTty(['/usr/bin/env'], { env: { Z: '1', A: '1' } });
    expect(output).not.toContain('TERM=');
    expect(output).toMatch(/^A=1\r\nSHELL=\/[^\r]*\r\nZ=1\r\n$/);
    expect((await runTty(['sh', '-c', 'kill -KILL $$'])).exitCode).toBe(1);
  });

  it('sets argv[0] from arg0 in PTY mode too', async () => {
    expect((await runTty(['bash', '-c', 'echo $0'], { arg0: 'shown-name' })).output).toBe('shown-name\r\n');
  });

  it('rejects bad starts with -32603 instead of silently falling back', async () => {
    const start = (argv: string[], extra = {}) =>
      server.error('process/start', { processId: 'bad', argv, cwd: '/tmp', env: BASE_ENV, tty: true, ...extra });
    expect(await start(['true'], { cwd: '/no/such/dir' })).toEqual({ code: -32603, message: 'No such file or directory (os error 2)' });
    expect(await start(['true'], { env: {} })).toEqual({ code: -32603, message: 'No such file or directory (os error 2)' });
    expect(await start([''])).toEqual({ code: -32603, message: 'missing program for PTY spawn' });
    // Binaries the kernel refuses, which execvp would hand to /bin/sh instead (Q6), in both modes.
    const foreign = Buffer.from(fs.readFileSync('/bin/true'));
    foreign.writeUInt16LE(process.arch === 'arm64' ? 62 : 183, 18); // e_machine: another machine's
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pty-format-'));
    for (const [name, bytes] of [
      ['foreign', foreign],
      ['stub', Buffer.from('\x7fELF and junk')],
    ] as const) {
      fs.writeFileSync(path.join(dir, name), bytes, { mode: 0o755 });
      for (const tty of [true, false])
        expect(await start([path.join(dir, name)], { tty })).toEqual({ code: -32603, message: 'Exec format error (os error 8)' });
    }
    fs.rmSync(dir, { recursive: true });
  });

  it('refuses a script whose #! interpreter is missing in generation 2, and starts it in generation 1, as each reference does', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pty-shebang-'));
    const script = path.join(dir, 'script');
    fs.writeFileSync(script, '#!/nonexistent/interpreter\necho hi\n', { mode: 0o755 });
    const second = await ServerProcess.started();
    try {
      const params = { processId: 'shebang', argv: [script], env: BASE_ENV, tty: true };
      expect(await second.error('process/start', { ...params, cwd: pathToFileURL(dir).href })).toEqual({
        code: -32603,
        message: 'No such file or directory (os error 2)',
      });
      expect(await server.request('process/start', { ...params, cwd: dir })).toEqual({ processId: 'shebang' });
      await server.waitClosed('shebang');
    } finally {
      await second.dispose();
      fs.rmSync(dir, { recursive: true });
    }
  });

  it('rejects closeStdin for PTY processes', async () => {
    const processId = id();
    await startTty(processId, ['cat']);
    expect(await server.error('process/write', { processId, chunk: '', closeStdin: true })).toEqual({
      code: -32602,
      message: 'closeStdin is only supported for pipeStdin processes',
    });
    await server.request('process/terminate', { processId });
    await server.waitClosed(processId);
  });

  it('gives children only fds 0-2: no other PTY master, no server pipes', async () => {
    const holder = id();
    await startTty(holder, ['sleep', '30.101']);
    const targets = [id(), id()];
    await startTty(targets[0]!, ['sleep', '30.102']);
    await server.start(targets[1]!, ['sleep', '30.103'], { pipeStdin: true });
    for (const marker of ['30.102', '30.103']) {
      const pid = await execedAs('sleep', marker);
      const fds = await settledFds(pid);
      expect(fds).toEqual(['0', '1', '2']);
    }
    for (const processId of [holder, ...targets]) await server.request('process/terminate', { processId });
  });

  it('kills job-control jobs of an interactive shell on terminate (session sweep)', async () => {
    const processId = id();
    await startTty(processId, ['bash', '--norc', '--noprofile', '-i'], { env: { ...BASE_ENV, PS1: '$ ' } });
    await server.request('process/write', { processId, chunk: b64('sleep 3001 & echo "job=$!"\n') });
    const match = await server
      .waitFor(() => /job=(\d+)/.test(server.output(processId).toString()))
      .then(() => /job=(\d+)/.exec(server.output(processId).toString())!);
    const jobPid = Number(match[1]);
    expect(await server.request('process/terminate', { processId })).toEqual({ running: true });
    await server.waitClosed(processId);
    expect(await waitDead([jobPid])).toEqual([]);
  });
});

describe('nothing is lost at exit', () => {
  const BYTES = 20_480;
  const burst = ['bash', '-c', `printf '%${BYTES}s' x`];

  it.each([
    ['tty', true],
    ['pipe', false],
  ])('delivers every byte of a 20 KiB burst in 100 of 100 runs (%s)', async (_name, tty) => {
    const short: number[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const ids = Array.from({ length: 10 }, () => id());
      await Promise.all(ids.map((processId) => server.start(processId, burst, { tty })));
      await Promise.all(ids.map((processId) => server.waitClosed(processId)));
      for (const processId of ids) {
        const length = server.output(processId).length;
        if (length !== BYTES) short.push(length);
      }
    }
    expect(short).toEqual([]);
  });
});

describe('output after the exit', () => {
  it.each([
    // Ignored before the fork: a job that set its own trap could get the leader's SIGHUP first.
    ['a job of bash -c that ignores SIGHUP', ['bash', '-c', "trap '' HUP; (sleep 0.3; echo bg-late) & echo main-exit"]],
    ['a job of sh -c that ignores SIGHUP', ['sh', '-c', "trap '' HUP; (sleep 0.3; echo bg-late) & echo main-exit"]],
  ])(
    'delivers what %s writes after the leader exited, then closes when it lets go of the terminal (as Codex 0.169)',
    async (_name, argv) => {
      const processId = id();
      await startTty(processId, argv);
      const closed = await server.waitClosed(processId);
      const events = server.messages.filter((m) => m.params?.processId === processId && m.method !== undefined);
      const exited = events.find((m) => m.method === 'process/exited')!;
      const late = events.find(
        (m) => m.method === 'process/output' && Buffer.from(m.params.chunk, 'base64').toString().includes('bg-late'),
      );
      expect(server.output(processId).toString()).toBe('main-exit\r\nbg-late\r\n');
      expect(late!.params.seq).toBeGreaterThan(exited.params.seq);
      expect(closed.params.seq).toBeGreaterThan(late!.params.seq);
    },
  );
});
