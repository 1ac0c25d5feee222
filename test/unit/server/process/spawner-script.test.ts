/**
 * spawner.pl driven directly over its line protocol: with setsid(2) as a
 * syscall (its number on this architecture) and through POSIX (0), its
 * children lead sessions of their own, hold only fds 0-2 (the spawner
 * closed what it inherited), exec failures come back as errno, and exits
 * as wait statuses.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { encodeStart, LineSplitter, parseSpawnerLine, type SpawnerMessage } from '../../../../src/server/process/spawner-protocol.js';

const script = fileURLToPath(new URL('../../../../src/server/process/spawner.pl', import.meta.url));
const SETSID: Partial<Record<string, string>> = { x64: '112', arm64: '157' };
const modes = [['POSIX', '0'], ...(SETSID[process.arch] ? [['syscall', SETSID[process.arch]!]] : [])];

/** The spawner's messages, in order, as they arrive. */
function messages(spawner: ChildProcessWithoutNullStreams): () => Promise<SpawnerMessage> {
  const queue: SpawnerMessage[] = [];
  const waiting: Array<(message: SpawnerMessage) => void> = [];
  const lines = new LineSplitter();
  spawner.stdout.on('data', (chunk: Buffer) => {
    for (const line of lines.push(chunk.toString('latin1'))) {
      const message = parseSpawnerLine(line)!;
      const taker = waiting.shift();
      if (taker) taker(message);
      else queue.push(message);
    }
  });
  return () => (queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise((resolve) => waiting.push(resolve)));
}

const start = (file: string, args: string[]) => ({
  program: file,
  file,
  argv0: file,
  args,
  cwd: '/tmp',
  env: { PATH: '/usr/bin:/bin' },
  pipeStdin: false,
  size: { rows: 24, cols: 80 },
});

describe.skipIf(!fs.existsSync('/usr/bin/perl'))('spawner.pl', () => {
  it.each(modes)('starts children in sessions of their own, with fds 0-2 only (setsid through %s)', async (_how, setsid) => {
    const held = fs.openSync('/dev/null', 'r');
    const spawner = spawn('/usr/bin/perl', [script, setsid], { stdio: ['pipe', 'pipe', 'pipe', held], env: {} });
    fs.closeSync(held);
    const next = messages(spawner);
    try {
      // No pipeline: while it runs, the shell itself would hold the pipe's descriptor (3).
      const probe = 'echo "$$ $(cut -d" " -f6 /proc/$$/stat)"; ls /proc/$$/fd';
      spawner.stdin.write(encodeStart('1', start('/bin/sh', ['-c', probe])));
      const started = await next();
      expect(started).toMatchObject({ type: 'started', id: '1' });
      if (started.type !== 'started') throw new Error('not started');
      const output = fs.readFileSync(`/proc/${spawner.pid}/fd/${started.stdoutFd}`, 'latin1');
      const [ids, ...fds] = output.trim().split('\n');
      const [pid, session] = ids!.split(' ');
      expect(Number(session)).toBe(Number(pid));
      expect(fds.map(Number)).toEqual([0, 1, 2]);
      expect(await next()).toEqual({ type: 'reaped', pid: started.pid, status: { code: 0 } });

      spawner.stdin.write(encodeStart('2', start('/nonexistent/program', [])));
      expect(await next()).toEqual({ type: 'failed', id: '2', errno: 2 });
      spawner.stdin.write(encodeStart('3', start('/bin/sh', ['-c', 'exit 7'])));
      const third = await next();
      expect(third).toMatchObject({ type: 'started', id: '3' });
      expect(await next()).toMatchObject({ type: 'reaped', status: { code: 7 } });
    } finally {
      spawner.stdin.end();
      await new Promise((resolve) => spawner.once('exit', resolve));
    }
    expect(spawner.exitCode).toBe(0);
  });

  // The spawner holds 0-2 and its wake pipe; a start's pipes then take exactly the last descriptors.
  it.each([
    [false, 11],
    [true, 13],
  ])('keeps its protocol to itself at the descriptor limit (stdin piped: %s, limit %i)', async (pipeStdin, limit) => {
    const setsid = SETSID[process.arch] ?? '0';
    const spawner = spawn('/bin/sh', ['-c', `ulimit -n ${limit} && exec /usr/bin/perl "$0" ${setsid}`, script], { env: {} });
    const next = messages(spawner);
    try {
      // No pipeline: the shell would hold its pipe's descriptors while ls lists them.
      const forger = ['-c', 'echo "S 99 1 - 5 7"; echo "X 4242 0"; ls /proc/$$/fd'];
      spawner.stdin.write(encodeStart('1', { ...start('/bin/sh', forger), pipeStdin }));
      const started = await next();
      expect(started).toMatchObject({ type: 'started', id: '1' });
      if (started.type !== 'started') throw new Error('not started');
      const output = fs.readFileSync(`/proc/${spawner.pid}/fd/${started.stdoutFd}`, 'latin1');
      expect(output).toBe('S 99 1 - 5 7\nX 4242 0\n0\n1\n2\n');
      expect(await next()).toEqual({ type: 'reaped', pid: started.pid, status: { code: 0 } });
    } finally {
      spawner.stdin.end();
      await new Promise((resolve) => spawner.once('exit', resolve));
    }
  });

  it.skipIf(process.arch !== 'x64')('refuses a start whose setsid did not give the child a session (a wrong syscall number)', async () => {
    const getppid = '110'; // answers, but not with the child's own pid
    const spawner = spawn('/usr/bin/perl', [script, getppid], { env: {} });
    const next = messages(spawner);
    try {
      spawner.stdin.write(encodeStart('1', start('/bin/true', [])));
      expect(await next()).toEqual({ type: 'failed', id: '1', errno: 22 });
    } finally {
      spawner.stdin.end();
      await new Promise((resolve) => spawner.once('exit', resolve));
    }
  });

  it.skipIf(SETSID[process.arch] === undefined)('loads no module where the setsid syscall is known: none of a planted @INC runs', () => {
    // Modules are looked up along @INC, whose first places a policy may let a confined child write.
    const planted = fs.mkdtempSync(path.join(os.tmpdir(), 'spawner-inc-'));
    try {
      for (const module of ['strict', 'warnings', 'POSIX', 'Fcntl'])
        fs.writeFileSync(path.join(planted, `${module}.pm`), 'print STDERR "PLANTED MODULE RAN\\n"; 1;');
      const run = spawnSync('/usr/bin/perl', [`-I${planted}`, script, SETSID[process.arch]!], { input: '', encoding: 'utf8' });
      expect(run.stderr).not.toContain('PLANTED MODULE RAN');
    } finally {
      fs.rmSync(planted, { recursive: true, force: true });
    }
  });
});
