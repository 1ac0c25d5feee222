/**
 * A WebSocket exec-server listener as a child process (ours, `node
 * dist/cli/main.js --listen ws://127.0.0.1:0`, or Codex's `codex exec-server
 * --listen ws://127.0.0.1:0`): started, its `ws://` URL read from what it
 * prints (ours on stderr, Codex on stdout), and stopped: SIGTERM, SIGKILL to
 * its process group if it has not exited within `killAfterMs`, and always
 * awaited until it has exited and been reaped, so that no listener (nor a
 * helper it left in its group) outlives the test that started it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { recordLeftover } from './leftovers.js';
import { CLI } from './server-process.js';

export interface WebSocketListener {
  /** `ws://127.0.0.1:PORT`, as printed by the listener. */
  url: string;
  pid: number;
  /** Resolves once the listener has printed a line matching `pattern` (e.g. a log line at --log-level info). */
  output(pattern: RegExp): Promise<void>;
  /** Everything the listener has printed so far. */
  printed(): string;
  /** Stops the listener and resolves once it has exited (idempotent). */
  stop(): Promise<void>;
  /** How it exited, once it has. */
  exitStatus: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface ListenerOptions {
  env?: NodeJS.ProcessEnv;
  /** How long to wait for the URL (default 20 s). */
  timeoutMs?: number;
  /** How long after SIGTERM before SIGKILL (default 5 s). */
  killAfterMs?: number;
  /** Runs once the process has exited (e.g. removes its token file and home). */
  cleanup?: () => void;
}

const TAIL_CHARS = 4000;
// A URL with a port that is not 0 (`cannot listen on ws://127.0.0.1:0: …` must not match).
const URL_PATTERN = /\bws:\/\/[^\s/]+:[1-9]\d*/;

/** Spawns `command args` and resolves once it has printed the `ws://` URL it listens on. */
export function startWebSocketListener(command: string, args: string[], options: ListenerOptions = {}): Promise<WebSocketListener> {
  const { env = process.env, timeoutMs = 20_000, killAfterMs = 5000, cleanup } = options;
  const label = [command, ...args].join(' ');
  // Its own process group: a listener that will not die is killed with every helper it started in its group.
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env, detached: true });
  // Its own group outlives the test worker: listed for the run's teardown (leftovers.ts), which
  // kills it if a test never stopped it (a hung test whose cleanup timed out).
  if (child.pid !== undefined) recordLeftover(child.pid);
  let output = '';
  let printed = '';
  const watchers = new Set<() => void>();
  let scanned = false;
  let onLine: (url: string) => void = () => undefined;
  const onData = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-TAIL_CHARS);
    printed += chunk.toString('utf8');
    for (const watcher of watchers) watcher();
    if (scanned) return;
    // Only whole lines: a URL split across two chunks must not be taken for a shorter port.
    const url = URL_PATTERN.exec(output.slice(0, output.lastIndexOf('\n') + 1))?.[0];
    if (url === undefined) return;
    scanned = true;
    onLine(url);
  };
  // Both pipes stay drained for the listener's whole life, so it never blocks on a full pipe.
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  // 'exit', or 'close' alone after a failed spawn (ENOENT…); 'close' also waits for the pipes.
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()).once('close', () => resolve()));
  const exitStatus = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= terminate(child, exited, closed, killAfterMs).finally(() => {
      cleanup?.();
    }));
  const tail = () => (output.trim() === '' ? '(no output)' : output.trimEnd());

  return new Promise<WebSocketListener>((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      void stop().then(() => reject(new Error(`${label}: ${why}; output tail:\n${tail()}`)));
    };
    const timer = setTimeout(() => fail(`printed no ws:// URL within ${timeoutMs} ms`), timeoutMs);
    onLine = (url) => {
      clearTimeout(timer);
      const waitFor = (pattern: RegExp) =>
        new Promise<void>((found) => {
          const check = () => {
            if (!pattern.test(printed)) return;
            watchers.delete(check);
            found();
          };
          watchers.add(check);
          check();
        });
      resolve({ url, pid: child.pid!, stop, exitStatus, output: waitFor, printed: () => printed });
    };
    child.once('error', (error) => fail(`could not be started (${error.message})`));
    child.once('exit', (code, signal) => {
      if (!scanned) fail(`exited (${signal ?? `code ${code}`}) before listening`);
    });
  });
}

/**
 * SIGTERM to the listener, SIGKILL to its whole process group if it has not
 * exited within `killAfterMs`; resolves once it has exited (reaped), its
 * output is read (or, if something it left holds the pipes, after 1 s) and
 * nothing is left in its process group.
 */
async function terminate(child: ChildProcess, exited: Promise<void>, closed: Promise<void>, killAfterMs: number): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return void (await closed);
  const killGroup = () => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // ESRCH: the group is empty
    }
  };
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const timer = setTimeout(killGroup, killAfterMs);
  await exited;
  clearTimeout(timer);
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
  child.stdout?.destroy();
  child.stderr?.destroy();
  killGroup();
}

/** A listener that requires a capability token, and that token. */
export interface TokenListener extends WebSocketListener {
  token: string;
}

/**
 * A scratch directory holding a random token (`token`, mode 0600) for
 * `--ws-token-file`, removed once the listener has exited; then `start`.
 */
async function withTokenFile(
  parent: string,
  start: (dir: string, tokenFile: string, cleanup: () => void) => Promise<WebSocketListener>,
): Promise<TokenListener> {
  const dir = fs.mkdtempSync(path.join(parent, '.exec-server-ws-'));
  recordLeftover(dir);
  const cleanup = () => fs.rmSync(dir, { recursive: true, force: true });
  const token = randomBytes(24).toString('hex');
  const tokenFile = path.join(dir, 'token');
  fs.writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  // A failed start has already stopped the listener and run `cleanup`.
  return { ...(await start(dir, tokenFile, cleanup)), token };
}

const tokenArgs = (tokenFile: string) => ['--listen', 'ws://127.0.0.1:0', '--ws-auth', 'capability-token', '--ws-token-file', tokenFile];

/** Our CLI (`dist/cli/main.js`) listening on a free loopback port, with a capability token. */
export function listenOurs(): Promise<TokenListener> {
  return withTokenFile(os.tmpdir(), (_dir, tokenFile, cleanup) =>
    startWebSocketListener(process.execPath, [CLI, ...tokenArgs(tokenFile)], { cleanup }),
  );
}

/**
 * Codex's `exec-server` listening on a free loopback port, with a capability
 * token (the same flags as ours) and a fresh CODEX_HOME outside /tmp (Codex
 * will not put its helper links under /tmp).
 */
export function listenCodex(binary: string): Promise<TokenListener> {
  return withTokenFile(os.homedir(), (dir, tokenFile, cleanup) =>
    startWebSocketListener(binary, ['exec-server', ...tokenArgs(tokenFile)], { env: { ...process.env, CODEX_HOME: dir }, cleanup }),
  );
}
