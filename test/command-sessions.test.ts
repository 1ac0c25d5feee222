/** The seed's interactive-session tests, against every executor. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CommandSessionError, CommandSessions, type Executor } from '../src/index.js';
import { executorKinds, referenceKinds } from './support/executors.js';
import { findByCmdline, waitDead } from './support/proc.js';

const ENV = { PATH: '/usr/local/bin:/usr/bin:/bin', PS1: '$ ', HOME: '/tmp' };
// Opt-in against the references: under a loaded CI run one case once saw the head of a
// reference's PTY output missing (not reproduced in 5 runs alone); the reference is not ours to fix.
const references = process.env.EXEC_SERVER_REFERENCE_SESSIONS ? referenceKinds() : [];
const kinds = [...executorKinds, ...references];
if (references.length === 0) {
  console.info(
    'command sessions: reference exec-servers not tested (set EXEC_SERVER_REFERENCE_SESSIONS=1; binaries from `node scripts/interop/install.mjs` or EXEC_SERVER_REFERENCE)',
  );
}

// The kinds run side by side, as do the tests marked concurrent in each: most of their time is spent
// waiting out the calls' timeouts. The rest run one at a time within their kind (`it.sequential`).
describe.concurrent.each(kinds.map((kind, index) => ({ ...kind, index })))('CommandSessions over $name', ({ create, index }) => {
  let executor: Executor;
  let sessions: CommandSessions;
  beforeAll(async () => {
    executor = await create();
    sessions = new CommandSessions(executor, { env: ENV, cwd: '/tmp' });
  });
  afterAll(async () => {
    await sessions.close();
    await executor.close();
  });

  /**
   * An interactive bash that has run a command: the windows of later calls then hold their own
   * command's time only, not bash's start (seconds on a loaded machine).
   */
  const shell = async () => {
    const opened = await sessions.exec({ input: ['bash', '--norc', '--noprofile', '-i'], timeoutMs: 100 });
    expect(opened.sessionId).toBeTypeOf('number');
    const id = opened.sessionId!;
    let seen = (await sessions.exec({ sessionId: id, input: ['echo READY-$((6*7))\n'], timeoutMs: 100 })).output;
    const deadline = Date.now() + 20_000;
    while (!seen.includes('READY-42')) {
      if (Date.now() > deadline) throw new Error(`bash not ready in 20 s: ${JSON.stringify(seen)}`);
      seen += (await sessions.exec({ sessionId: id, input: [], timeoutMs: 100 })).output;
    }
    return id;
  };

  /** Windows for output that must come within one call: long enough for a loaded machine; the tests wait side by side. */
  const WINDOW_MS = 3000;
  /** Writes `input` to session `id`, then collects in short calls until the output matches `pattern` (20 s at most). */
  const until = async (id: number, input: string, pattern: RegExp) => {
    let output = (await sessions.exec({ sessionId: id, input: [input], timeoutMs: 100 })).output;
    const deadline = Date.now() + 20_000;
    while (!pattern.test(output) && Date.now() < deadline)
      output += (await sessions.exec({ sessionId: id, input: [], timeoutMs: 100 })).output;
    return output;
  };

  // Each of these waits out its calls' timeouts in a shell of its own: they wait side by side.
  it.concurrent('keeps a session across calls', async ({ expect }) => {
    const id = await shell();
    const exported = await sessions.exec({ sessionId: id, input: ['export', 'CODEX_INTERACTIVE_SHELL_VAR=codex\n'], timeoutMs: 10 });
    expect(exported.sessionId).toBe(id);
    expect(await until(id, 'echo "[$CODEX_INTERACTIVE_SHELL_VAR]"\n', /\[codex\]/)).toContain('[codex]');
  });

  it.concurrent('keeps sessions independent', async ({ expect }) => {
    const a = await shell();
    const b = await shell();
    await sessions.exec({ sessionId: a, input: ['export CODEX_INTERACTIVE_SHELL_VAR=codex\n'], timeoutMs: 10 });
    const fromA = await until(a, 'echo "[$CODEX_INTERACTIVE_SHELL_VAR]"\n', /\[codex\]/);
    expect(fromA).toContain('[codex]');
    const fromB = await until(b, 'echo "<$CODEX_INTERACTIVE_SHELL_VAR>"\n', /<\w*>/);
    expect(fromB).toContain('<>');
  });

  it.concurrent('returns at the timeout and hands late output to a later call', async ({ expect }) => {
    const id = await shell();
    await sessions.exec({ sessionId: id, input: ['export CODEX_INTERACTIVE_SHELL_VAR=codex\n'], timeoutMs: 10 });
    const early = await sessions.exec({ sessionId: id, input: ['sleep 1 && echo $CODEX_INTERACTIVE_SHELL_VAR\n'], timeoutMs: 10 });
    const printed = /(^|\n)codex\r?\n/; // the echo's own line, not the command line the terminal echoes
    expect(early.output).not.toMatch(printed);
    let late = '';
    const deadline = Date.now() + 20_000;
    while (!printed.test(late) && Date.now() < deadline) late += (await sessions.exec({ sessionId: id, input: [], timeoutMs: 500 })).output;
    expect(late).toMatch(printed);
  });

  it.concurrent('lets concurrent calls on one session take turns, each with the output of its own input', async ({ expect }) => {
    const id = await shell();
    const [first, second] = await Promise.all([
      sessions.exec({ sessionId: id, input: ['echo turn-$((40+2))\n'], timeoutMs: WINDOW_MS }),
      sessions.exec({ sessionId: id, input: ['echo turn-$((50+3))\n'], timeoutMs: WINDOW_MS }),
    ]);
    expect(first.output).toContain('turn-42');
    expect(first.output).not.toContain('turn-53');
    expect(second.output).toContain('turn-53');
    expect(second.output).not.toContain('turn-42');
  });

  it.concurrent('lets the call that opens a session take the first turn: a call on its id waits for it', async ({ expect }) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opening-turn-'));
    const own = new CommandSessions(executor, { env: ENV, cwd: dir }); // ids from 1
    try {
      const opening = own.exec({ input: ['sh', '-c', 'echo OPENING; touch started; exec cat'], timeoutMs: 1000 });
      // A call on id 1 while the process is still starting, and one while the opening call collects: both wait their turn.
      const early = own.exec({ sessionId: 1, input: ['EARLY\n'], timeoutMs: WINDOW_MS });
      await vi.waitFor(() => expect(fs.existsSync(path.join(dir, 'started'))).toBe(true), { timeout: 5000, interval: 10 });
      const next = own.exec({ sessionId: 1, input: ['NEXT\n'], timeoutMs: WINDOW_MS });
      const [first, second, third] = await Promise.all([opening, early, next]);
      expect(first).toMatchObject({ sessionId: 1 });
      expect(first.output).toContain('OPENING');
      expect(first.output).not.toContain('EARLY');
      expect(second.output).toContain('EARLY');
      expect(second.output).not.toContain('OPENING');
      expect(third.output).toContain('NEXT');
      expect(third.output).not.toContain('EARLY');
      // A call on the id of a session whose start fails waits for the failure, then finds the id unknown.
      const failing = own.exec({ input: [path.join(dir, 'no-such-command')] });
      const onFailing = own.exec({ sessionId: 2, input: ['x'] });
      await expect(failing).rejects.toThrow();
      await expect(onFailing).rejects.toThrow('unknown session id 2');
    } finally {
      await own.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it.concurrent('forgets a session whose process exited, with an unknown-session error', async ({ expect }) => {
    const id = await shell();
    await sessions.exec({ sessionId: id, input: ['exit\n'], timeoutMs: 20_000 }); // returns once the session ends
    const error = await sessions.exec({ sessionId: id, input: [], timeoutMs: 100 }).catch((e) => e);
    expect(error).toBeInstanceOf(CommandSessionError);
    expect(error.message).toBe(`unknown session id ${id}`);
    await expect(sessions.exec({ sessionId: 999, input: ['x'] })).rejects.toThrow('unknown session id 999');
  });

  it.sequential('clamps large timeouts with a warning, and returns when the process exits', async () => {
    const started = Date.now();
    const result = await sessions.exec({ input: ['echo', 'codex'], timeoutMs: 120_000 });
    expect(result.output.startsWith('Warning: requested timeout 120000ms exceeds maximum of 60000ms; clamping to 60000ms.\n')).toBe(true);
    expect(result.output).toContain('codex');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it.sequential('refuses a NaN timeout, and ends execs starting or collecting when the sessions close, killing their processes', async () => {
    await expect(sessions.exec({ input: ['true'], timeoutMs: Number.NaN })).rejects.toThrow(RangeError);
    const own = new CommandSessions(executor, { env: ENV, cwd: '/tmp' });
    const started = Date.now();
    // One still starting when close() runs, one already collecting: both end, their processes killed.
    // Markers of this kind's own, since the other kinds run the same test meanwhile.
    const [startingMark, collectingMark] = [`30.5${index}1`, `30.5${index}2`];
    let startSettled = false;
    const startingExec = own.exec({ input: ['sleep', startingMark], timeoutMs: 20_000 }).finally(() => (startSettled = true));
    const starting = expect(startingExec).rejects.toMatchObject({ kind: 'closed', message: 'the command sessions are closed' });
    await own.close();
    await new Promise(setImmediate);
    expect(startSettled).toBe(true); // close() waited for it, and for its process to be terminated
    await starting;
    // And after close, nothing starts.
    const marker = path.join(os.tmpdir(), `sessions-closed-${process.pid}-${index}`);
    await expect(own.exec({ input: ['sh', '-c', `echo > ${marker}`] })).rejects.toMatchObject({ kind: 'closed' });
    expect(fs.existsSync(marker)).toBe(false);
    const later = new CommandSessions(executor, { env: ENV, cwd: '/tmp' });
    // Opened first, so that the exec below is collecting (one still starting when close() runs fails, as above).
    const opened = await later.exec({ input: ['sh', '-c', `echo up; exec sleep ${collectingMark}`], timeoutMs: 0 });
    const collecting = later.exec({ sessionId: opened.sessionId!, input: [], timeoutMs: 20_000 });
    await vi.waitFor(() => expect(findByCmdline(collectingMark)).not.toEqual([]), { timeout: 15_000 });
    // And one waiting its turn behind it: under way too, it returns what there is.
    const waiting = later.exec({ sessionId: opened.sessionId!, input: ['echo never\n'], timeoutMs: 20_000 });
    await later.close();
    expect(await collecting).not.toHaveProperty('sessionId'); // over, its process gone
    expect(await waiting).toEqual({ output: '' });
    expect(await waitDead([...findByCmdline(startingMark), ...findByCmdline(collectingMark)])).toEqual([]);
    expect(Date.now() - started).toBeLessThan(15_000); // well below the 20 s the execs would wait
  });

  it.sequential('does not keep completed commands', async () => {
    const result = await sessions.exec({ input: ['/bin/echo', 'codex'], timeoutMs: 20_000 }); // returns once it ends
    expect(result.sessionId).toBeUndefined();
    expect(result.output).toContain('codex');
    expect(result.exitCode).toBe(0);
  });

  it.sequential('hands a session that ended between two calls its last output once, then forgets it', async () => {
    const trigger = path.join(os.tmpdir(), `sessions-end-${process.pid}-${index}`);
    const script = 'while [ ! -e "$0" ]; do sleep 0.01; done; echo important-result; exit 3';
    const opened = await sessions.exec({ input: ['sh', '-c', script, trigger], timeoutMs: 0 });
    const id = opened.sessionId!;
    const ended = new Promise<void>((resolve) => {
      let ours: string | undefined; // the process that printed the result (the executor serves other tests too)
      const stop = executor.onEvent((processId, event) => {
        if (event.type === 'output' && event.chunk.toString().includes('important-result')) ours = processId;
        if (event.type === 'closed' && processId === ours) {
          stop();
          resolve();
        }
      });
    });
    fs.writeFileSync(trigger, '');
    await ended;
    fs.rmSync(trigger);
    const last = await sessions.exec({ sessionId: id, input: ['ignored\n'], timeoutMs: 100 });
    expect(last.sessionId).toBeUndefined();
    expect(last.output).toContain('important-result');
    expect(last.exitCode).toBe(3);
    await expect(sessions.exec({ sessionId: id, input: [] })).rejects.toThrow(`unknown session id ${id}`);
  });

  it.sequential('reports the exit code of a session that ended between two calls with nothing more printed', async () => {
    const trigger = path.join(os.tmpdir(), `sessions-quiet-end-${process.pid}-${index}`);
    const marker = `quiet-end-${index}`;
    let ours: string | undefined;
    const printed = new Promise<void>((resolve) => {
      const stop = executor.onEvent((processId, event) => {
        if (event.type === 'output' && event.chunk.toString().includes(marker)) {
          ours = processId;
          stop();
          resolve();
        }
      });
    });
    const script = `echo ${marker}; while [ ! -e "$0" ]; do sleep 0.01; done; exit 7`;
    const opened = await sessions.exec({ input: ['sh', '-c', script, trigger], timeoutMs: 0 });
    const id = opened.sessionId!;
    await printed;
    // Taken by the first call or this one: nothing is left over.
    expect(opened.output + (await sessions.exec({ sessionId: id, input: [], timeoutMs: 0 })).output).toContain(marker);
    const closed = new Promise<void>((resolve) => {
      const stop = executor.onEvent((processId, event) => {
        if (event.type === 'closed' && processId === ours) {
          stop();
          resolve();
        }
      });
    });
    fs.writeFileSync(trigger, '');
    await closed;
    fs.rmSync(trigger);
    expect(await sessions.exec({ sessionId: id, input: [], timeoutMs: 100 })).toEqual({ output: '', exitCode: 7 });
    await expect(sessions.exec({ sessionId: id, input: [] })).rejects.toThrow(`unknown session id ${id}`);
  });

  it.sequential('rejects an empty command line', async () => {
    await expect(sessions.exec({ input: [] })).rejects.toThrow('missing command line');
  });

  it.sequential('caps output at 128 KiB, cut in the middle, never splitting a character', async () => {
    const result = await sessions.exec({
      input: [
        'sh',
        '-c',
        'printf "HEAD"; i=0; while [ $i -lt 4000 ]; do printf "ééééééééééééééééééééééééééééééé"; i=$((i+1)); done; printf "TAIL"',
      ],
      timeoutMs: 20_000,
    });
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(128 * 1024);
    expect(result.output).toContain('bytes truncated');
    expect(result.output.endsWith('TAIL')).toBe(true);
    expect(result.output).not.toContain('\uFFFD');
  });

  it.sequential('cuts output that piled up between two calls the same way: head, marked middle, tail, whole characters', async () => {
    const burst = 'printf "HEAD"; i=0; while [ $i -lt 4000 ]; do printf "ééééééééééééééééééééééééééééééé"; i=$((i+1)); done; printf "TAIL"';
    // Started by a file, not by input: a call that writes input could still be collecting when the burst comes.
    const trigger = path.join(os.tmpdir(), `sessions-burst-${process.pid}-${index}`);
    const opened = await sessions.exec({
      input: ['sh', '-c', `while [ ! -e "$0" ]; do sleep 0.01; done; ${burst}; read end`, trigger],
      timeoutMs: 0,
    });
    const id = opened.sessionId!;
    let seen = '';
    const burstDone = new Promise<void>((resolve) => {
      const stop = executor.onEvent((_processId, event) => {
        if (event.type !== 'output') return;
        seen = (seen + event.chunk.toString('latin1')).slice(-8);
        if (seen.endsWith('TAIL')) {
          stop();
          resolve();
        }
      });
    });
    fs.writeFileSync(trigger, '');
    await burstDone;
    fs.rmSync(trigger);
    const result = await sessions.exec({ sessionId: id, input: [], timeoutMs: 0 });
    expect(result.sessionId).toBe(id);
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(128 * 1024);
    // Compared in short pieces: a failure must not print 128 KiB.
    expect(result.output.slice(0, 6)).toBe('HEADéé');
    expect(/éé\n…\d+ bytes truncated…\néé/.exec(result.output)?.[0]).toBeDefined();
    expect(result.output.slice(-6)).toBe('ééTAIL');
    expect(result.output.includes('\uFFFD')).toBe(false);
    await sessions.exec({ sessionId: id, input: ['\n'], timeoutMs: 2000 });
  });
});
