/**
 * Drives the built CLI (`dist/cli/main.js`) as a real child process over
 * pipes, the way a client does: write lines, read lines, await responses
 * and notifications by predicate (never by sleeping).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli/main.js');
export const BASE_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

const PROXY_VARIABLES = /^(all|http|https|no)_proxy$/i;

/**
 * `env` without the proxy variables a server obeys for http/request (as the reference does): tests reach
 * their origins on 127.0.0.1 directly, whatever the machine that runs them sets.
 */
export function withoutProxies(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !PROXY_VARIABLES.test(name)));
}

export type Json = Record<string, any>;

export interface Waiter {
  match: (message: Json) => boolean;
  resolve: (message: Json) => void;
}

export class ServerProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly messages: Json[] = [];
  readonly rawLines: string[] = [];
  stderr = '';
  private parts: string[] = [];
  /** Another server (the reference): it removes `/` when asked, where ours refuses. */
  private readonly isReference: boolean;
  /** Output bytes per process, counted from every `process/output` seen. */
  readonly outputBytes = new Map<string, number>();
  /** When false, `process/output` messages are counted but not kept (for floods). */
  keepOutput = true;
  private waiters: Waiter[] = [];
  private nextId = 1000;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  /** Our CLI with `args`; or, with `program`, any stdio exec-server (e.g. the reference's `codex exec-server`); in `cwd` if given. */
  constructor(
    args: string[] = [],
    env: NodeJS.ProcessEnv = withoutProxies(process.env),
    user?: { uid: number; gid: number },
    program?: [string, string[]],
    cwd?: string,
  ) {
    this.isReference = program !== undefined;
    const [file, argv] = program ?? [process.execPath, [CLI, ...args]];
    this.child = spawn(file, argv, { stdio: 'pipe', env, cwd, ...user });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (text: string) => this.onData(text));
    this.child.stderr.on('data', (chunk) => (this.stderr += chunk));
    this.child.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  /** A server that has completed the handshake. */
  static async started(
    args: string[] = [],
    env?: NodeJS.ProcessEnv,
    user?: { uid: number; gid: number },
    program?: [string, string[]],
  ): Promise<ServerProcess> {
    const server = new ServerProcess(args, env, user, program);
    await server.request('initialize', { clientName: 'test' });
    server.notify('initialized', {});
    return server;
  }

  private onData(text: string): void {
    // Look for newlines only in the new text: a 140 MB line must not be rescanned per chunk.
    let newline = text.indexOf('\n');
    if (newline === -1) {
      this.parts.push(text);
      return;
    }
    let start = 0;
    while (newline !== -1) {
      const line = this.parts.length > 0 ? this.parts.join('') + text.slice(start, newline) : text.slice(start, newline);
      this.parts = [];
      this.onLine(line);
      start = newline + 1;
      newline = text.indexOf('\n', start);
    }
    if (start < text.length) this.parts.push(text.slice(start));
  }

  private onLine(line: string): void {
    const message = JSON.parse(line) as Json;
    if (message.method === 'process/output') {
      const { processId, chunk } = message.params;
      this.outputBytes.set(processId, (this.outputBytes.get(processId) ?? 0) + base64Length(chunk));
      if (!this.keepOutput) return;
    }
    this.messages.push(message);
    this.rawLines.push(line);
    this.waiters = this.waiters.filter((waiter) => {
      if (!waiter.match(message)) return true;
      waiter.resolve(message);
      return false;
    });
  }

  sendLine(line: string | Buffer): void {
    this.child.stdin.write(line);
    if (typeof line === 'string' && !line.endsWith('\n')) this.child.stdin.write('\n');
  }

  send(message: Json): void {
    if (this.isReference) refuseRootRemoval(message);
    this.sendLine(JSON.stringify(message));
  }

  notify(method: string, params?: unknown): void {
    this.send(params === undefined ? { method } : { method, params });
  }

  /** Resolves with the first message (already received or future) that matches. */
  waitFor(match: (message: Json) => boolean, timeoutMs = 10_000): Promise<Json> {
    const seen = this.messages.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting; stderr: ${this.stderr}`)), timeoutMs);
      this.waiters.push({
        match,
        resolve: (message) => {
          clearTimeout(timer);
          resolve(message);
        },
      });
    });
  }

  /** Sends a request and resolves with its whole response message. */
  call(method: string, params?: unknown, id: string | number = this.nextId++): Promise<Json> {
    this.send(params === undefined ? { id, method } : { id, method, params });
    return this.waitFor((message) => message.id === id && !('method' in message));
  }

  /** Sends a request; resolves with its result, rejects with its error. */
  async request(method: string, params?: unknown): Promise<any> {
    const response = await this.call(method, params);
    if (response.error) throw Object.assign(new Error(response.error.message), response.error);
    return response.result;
  }

  /** The error object of a request that must fail. */
  async error(method: string, params?: unknown): Promise<{ code: number; message: string }> {
    const response = await this.call(method, params);
    if (!response.error) throw new Error(`expected an error, got ${JSON.stringify(response.result)}`);
    return response.error;
  }

  notifications(processId: string): Json[] {
    return this.messages.filter((m) => m.method?.startsWith('process/') && m.params?.processId === processId);
  }

  /**
   * `closed`, once every event numbered below it has come too: the reference sends
   * its notifications from separate tasks, so they may arrive out of seq order.
   */
  async waitClosed(processId: string, timeoutMs?: number): Promise<Json> {
    const closed = await this.waitFor((m) => m.method === 'process/closed' && m.params.processId === processId, timeoutMs);
    const last = closed.params.seq;
    // Without kept output there is nothing to count.
    if (typeof last === 'number' && this.keepOutput) {
      const seqs = new Set<unknown>();
      const counted = (m: Json) => {
        if (m.method?.startsWith('process/') && m.params?.processId === processId) seqs.add(m.params.seq);
        return seqs.size >= last;
      };
      await this.waitFor(counted, timeoutMs);
    }
    return closed;
  }

  /** The `exited` notification, awaited: it may come after `closed` (see waitClosed). */
  waitExited(processId: string, timeoutMs?: number): Promise<Json> {
    return this.waitFor((m) => m.method === 'process/exited' && m.params.processId === processId, timeoutMs);
  }

  /** All output bytes of a process, from its notifications. */
  output(processId: string): Buffer {
    return Buffer.concat(
      this.notifications(processId)
        .filter((m) => m.method === 'process/output')
        .map((m) => Buffer.from(m.params.chunk, 'base64')),
    );
  }

  /** Starts a process with defaults (pipes, /tmp, BASE_ENV). */
  start(processId: string, argv: string[], extra: Json = {}): Promise<any> {
    return this.request('process/start', { processId, argv, cwd: '/tmp', env: BASE_ENV, tty: false, ...extra });
  }

  /** Starts a process, waits for `closed`, and returns its events, exit code and output. */
  async runToClose(processId: string, argv: string[], extra: Json = {}) {
    await this.start(processId, argv, extra);
    await this.waitClosed(processId);
    const exited = await this.waitExited(processId);
    const events = this.notifications(processId);
    return { processId, events, exitCode: exited.params.exitCode as number, output: this.output(processId).toString() };
  }

  /** Closes stdin and waits for the server to exit. */
  async close(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.stdin.end();
    return this.exited;
  }

  /** Kills the server if a test left it running. */
  async dispose(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.stdin.end();
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
      await this.exited;
      clearTimeout(timer);
    }
  }
}

export function b64(text: string): string {
  return Buffer.from(text).toString('base64');
}

function base64Length(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return (text.length / 4) * 3 - padding;
}

/**
 * Servers a test file starts, disposed of after each test:
 * `const servers = new ServerPool(); afterEach(() => servers.disposeAll());`
 */
export class ServerPool {
  private readonly servers: ServerProcess[] = [];

  async started(args: string[] = [], env?: NodeJS.ProcessEnv): Promise<ServerProcess> {
    const server = await ServerProcess.started(args, env);
    this.servers.push(server);
    return server;
  }

  async disposeAll(): Promise<void> {
    for (const server of this.servers.splice(0)) await server.dispose();
  }
}

/**
 * Throws before a removal of the root directory reaches a reference server: Codex's removes
 * it recursively when asked (a probe that compared the two lost this machine's /etc).
 */
function refuseRootRemoval(message: Json): void {
  if (message.method !== 'fs/remove' || typeof message.params?.path !== 'string') return;
  const target = message.params.path.startsWith('file://') ? new URL(message.params.path).pathname : message.params.path;
  if (path.resolve('/', target) === '/') throw new Error(`not sent to a reference server: fs/remove of ${message.params.path}`);
}
