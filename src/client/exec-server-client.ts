/**
 * `ExecServerClient`: a typed client for any stdio exec-server (ours or the
 * reference), over a spawned server or a pair of streams.
 *
 * It speaks through vscode-jsonrpc with the same line framing as the server,
 * routes notifications to process sessions (which restore seq order), and
 * turns a broken transport into events and rejections rather than hangs.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createMessageConnection, ResponseError, type MessageConnection } from 'vscode-jsonrpc/node';
import { Method, Notification } from '../protocol/methods.js';
import type {
  EnvironmentInfoResult,
  FsDirectoryEntry,
  FsMetadataResult,
  HttpHeader,
  HttpBodyDeltaNotification,
  InitializeResult,
  ProcessClosedNotification,
  ProcessExitedNotification,
  ProcessOutputNotification,
  ProcessReadResult,
  WriteStatus,
} from '../protocol/types.js';
import { LineMessageReader } from '../transport/line-reader.js';
import { LineMessageWriter } from '../transport/line-writer.js';
import { decodeOutputLine, type OutputLine } from '../transport/output-line.js';
import { ClientErrors, ExecServerClientError, ExecServerError } from './errors.js';
import { EventQueue } from './event-queue.js';
import { decodeReadResult, ProcessSession, type ReadOptions, type ReadResult, type SessionBackend } from './process-session.js';
import { runProcess, type RunOptions, type RunResult } from './run.js';
import { ServerGeneration } from './server-generation.js';
import { ServerChild } from './server-child.js';

export const DEFAULT_INITIALIZE_TIMEOUT_MS = 10_000;

export interface ConnectOptions {
  /** Sent as `clientName` in `initialize` (default "exec-server-client"). */
  clientName?: string;
  /** Asks the server to resume a session (the reference rejects unknown ids). */
  resumeSessionId?: string;
  /** How long the handshake may take (default 10 s). */
  initializeTimeoutMs?: number;
}

export interface SpawnOptions extends ConnectOptions {
  /** The server program (default: this package's own CLI, run by this Node). */
  command?: string;
  args?: string[];
  /** The server's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface StartOptions {
  argv: string[];
  /** Default: a random UUID. */
  processId?: string;
  /** Default: this process's cwd. */
  cwd?: string;
  /** The child's whole environment (nothing is inherited). Default: `{ PATH }` of this process. */
  env?: Record<string, string>;
  tty?: boolean;
  pipeStdin?: boolean;
  arg0?: string;
  size?: { rows: number; cols: number };
  /**
   * Keep events until the first consumer (iterator, listener, stream)
   * attaches. Default true; set false when you only poll with `read()`, so
   * that unconsumed output does not accumulate in memory.
   */
  bufferEvents?: boolean;
}

export interface HttpRequestOptions {
  method: string;
  url: string;
  headers?: HttpHeader[];
  body?: Uint8Array | string;
  timeoutMs?: number;
  requestId?: string;
}

export interface HttpResponse {
  status: number;
  headers: HttpHeader[];
  body: Buffer;
}

export interface HttpStreamResponse {
  status: number;
  headers: HttpHeader[];
  /** The body as it arrives; throws if the server reports a body error. */
  body: AsyncIterable<Buffer>;
}

/** This package's CLI, found from src/client or dist/client alike. */
const OWN_CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli/main.js');
const EXIT_REPORT_WAIT_MS = 2000;

export class ExecServerClient implements AsyncDisposable {
  /** The `sessionId` the server returned from `initialize`. */
  sessionId = '';
  /** The server's protocol generation, learnt from `initialize`. */
  private generation = new ServerGeneration(1, undefined);
  private readonly connection: MessageConnection;
  private readonly sessions = new Map<string, ProcessSession>();
  private readonly bodies = new Map<string, EventQueue<Buffer | Error>>();
  private failure: ExecServerClientError | undefined;
  private readonly disconnected: Promise<never>;
  private rejectAll!: (error: Error) => void;
  private closing: Promise<void> | undefined;
  private violation: string | undefined;

  private constructor(
    input: Readable,
    private readonly output: Writable,
    private readonly child?: ServerChild,
  ) {
    this.disconnected = new Promise<never>((_, reject) => (this.rejectAll = reject));
    this.disconnected.catch(() => undefined);
    const reader = new LineMessageReader(input, {
      onInvalidLine: (_error, line) => this.onProtocolViolation(line ?? '<invalid bytes>'),
      onEnd: () => this.onDisconnect('the server closed its output'),
      closeOnEnd: true,
      preview: (line) => this.previewOutput(line),
    });
    this.connection = createMessageConnection(reader, new LineMessageWriter(output));
    this.connection.onNotification((method, params) => this.onNotification(method, params));
    this.connection.onClose(() => this.onDisconnect('connection closed'));
    this.connection.onError(([error]) => this.onDisconnect(error.message));
    this.connection.listen();
  }

  /** Spawns a server (default: this package's CLI) and completes the handshake. */
  static async spawn(options: SpawnOptions = {}): Promise<ExecServerClient> {
    const command = options.command ?? process.execPath;
    const args = options.command === undefined ? [OWN_CLI, ...(options.args ?? [])] : (options.args ?? []);
    let child: ServerChild;
    try {
      child = await ServerChild.spawn({ command, args, env: options.env, cwd: options.cwd });
    } catch (error) {
      throw ClientErrors.spawnFailed(command, (error as Error).message);
    }
    const client = new ExecServerClient(child.stdout, child.stdin, child);
    try {
      await client.handshake(options, child);
    } catch (error) {
      await child.kill();
      throw error;
    }
    return client;
  }

  /** Talks to a server over existing streams (in-process servers, tests, ssh pipes). */
  static async connect(readable: Readable, writable: Writable, options: ConnectOptions = {}): Promise<ExecServerClient> {
    const client = new ExecServerClient(readable, writable);
    await client.handshake(options);
    return client;
  }

  private async handshake(options: ConnectOptions, child?: ServerChild): Promise<void> {
    const timeoutMs = options.initializeTimeoutMs ?? DEFAULT_INITIALIZE_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(ClientErrors.handshakeTimeout(timeoutMs)), timeoutMs);
    });
    const exited = child
      ? child.exited.then((status) => Promise.reject(ClientErrors.serverExited(status, child.stderr)))
      : new Promise<never>(() => undefined);
    try {
      const result = await Promise.race([
        this.call<InitializeResult>(Method.Initialize, {
          clientName: options.clientName ?? 'exec-server-client',
          resumeSessionId: options.resumeSessionId ?? null,
        }),
        timeout,
        exited,
      ]);
      this.sessionId = result.sessionId;
      this.generation = ServerGeneration.fromInitialize(result);
      await this.connection.sendNotification(Method.Initialized, {});
    } catch (error) {
      if (this.violation !== undefined) throw ClientErrors.protocolViolation(this.violation);
      // A server that dies mid-handshake first shows up as a closed stream: report its exit instead.
      if (child && error instanceof ExecServerClientError && error.kind === 'disconnected') {
        const status = await Promise.race([child.exited, delay(EXIT_REPORT_WAIT_MS)]);
        if (typeof status === 'string') throw ClientErrors.serverExited(status, child.stderr);
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  // ---- transport events ----

  private onNotification(method: string, params: unknown): void {
    switch (method) {
      case Notification.ProcessOutput: {
        const p = params as ProcessOutputNotification;
        this.routeOutput({ ...p, chunk: Buffer.from(p.chunk, 'base64') });
        return;
      }
      case Notification.ProcessExited: {
        const p = params as ProcessExitedNotification;
        this.sessions.get(p.processId)?.receive({ type: 'exited', seq: p.seq, exitCode: p.exitCode });
        return;
      }
      case Notification.ProcessClosed: {
        const p = params as ProcessClosedNotification;
        this.sessions.get(p.processId)?.receive({ type: 'closed', seq: p.seq });
        return;
      }
      case Notification.HttpBodyDelta: {
        const p = params as HttpBodyDeltaNotification;
        const body = this.bodies.get(p.requestId);
        if (!body) return;
        if (p.deltaBase64) body.push(Buffer.from(p.deltaBase64, 'base64'));
        if (p.done) {
          if (p.error !== null) body.push(new Error(p.error));
          body.end();
          this.bodies.delete(p.requestId);
        }
        return;
      }
      default:
        return; // unknown notifications are ignored
    }
  }

  /** `process/output` lines skip JSON.parse and the dispatch queue (sessions re-order by seq). */
  private previewOutput(line: Buffer): boolean {
    const output = decodeOutputLine(line);
    if (!output) return false;
    this.routeOutput(output);
    return true;
  }

  private routeOutput({ processId, seq, stream, chunk }: OutputLine): void {
    this.sessions.get(processId)?.receive({ type: 'output', seq, stream, chunk });
  }

  private onProtocolViolation(line: string): void {
    this.violation ??= line;
    this.onDisconnect(`protocol violation: ${ClientErrors.protocolViolation(line).message}`);
    void this.child?.kill();
  }

  /** Fails every session and pending call once, with the canonical message. */
  private onDisconnect(reason: string): void {
    if (this.failure) return;
    this.failure = ClientErrors.disconnected(reason);
    this.rejectAll(this.failure);
    for (const session of [...this.sessions.values()]) session.fail(this.failure.message);
    this.sessions.clear();
    for (const body of this.bodies.values()) {
      body.push(new Error(this.failure.message));
      body.end();
    }
    this.bodies.clear();
    this.connection.dispose();
    if (this.child && !this.closing) void this.child.kill();
  }

  // ---- calls ----

  private async call<T>(method: string, params: unknown): Promise<T> {
    if (this.failure) throw this.failure;
    try {
      return await Promise.race([this.connection.sendRequest<T>(method, params), this.disconnected]);
    } catch (error) {
      if (error instanceof ResponseError) throw new ExecServerError(error.code, error.message);
      if (this.failure) throw this.failure;
      throw error;
    }
  }

  /**
   * Sends any request and returns its raw result (base64 stays base64).
   * The typed methods below are preferred; this is for methods they do not cover.
   */
  request<T = unknown>(method: string, params?: unknown): Promise<T> {
    return this.call<T>(method, params);
  }

  /** Starts a process and returns its session (events in seq order). */
  async start(options: StartOptions): Promise<ProcessSession> {
    if (this.failure) throw this.failure;
    const processId = options.processId ?? randomUUID();
    if (this.sessions.has(processId)) throw new ExecServerError(-32600, `process ${processId} already exists`);
    const session = new ProcessSession(processId, options.tty ?? false, this.backend, options.bufferEvents ?? true);
    // Registered before the request: notifications may precede the response.
    this.sessions.set(processId, session);
    session.onFinished = () => {
      if (this.sessions.get(processId) === session) this.sessions.delete(processId);
    };
    try {
      await this.call(Method.ProcessStart, {
        processId,
        argv: options.argv,
        cwd: this.generation.path(options.cwd ?? process.cwd()),
        env: options.env ?? (process.env.PATH ? { PATH: process.env.PATH } : {}),
        tty: options.tty ?? false,
        pipeStdin: options.pipeStdin ?? false,
        arg0: options.arg0 ?? null,
        ...(options.size ? { size: options.size } : {}),
      });
    } catch (error) {
      if (this.sessions.get(processId) === session) this.sessions.delete(processId);
      throw error;
    }
    return session;
  }

  /** Runs a command to completion and collects its output. */
  run(argv: string[], options: RunOptions = {}): Promise<RunResult> {
    return runProcess(this, argv, options);
  }

  private readonly backend: SessionBackend = {
    read: async (processId: string, options: ReadOptions): Promise<ReadResult> => {
      return decodeReadResult(await this.call<ProcessReadResult>(Method.ProcessRead, { processId, ...options }));
    },
    write: (processId, bytes, closeStdin) => this.write(processId, bytes, { closeStdin }),
    terminate: async (processId) => (await this.call<{ running: boolean }>(Method.ProcessTerminate, { processId })).running,
    resize: async (processId, rows, cols) => void (await this.call(Method.ProcessResize, { processId, rows, cols })),
    signal: async (processId, signal) => void (await this.call(Method.ProcessSignal, { processId, signal })),
  };

  /** The protocol generation the server speaks (2 for Codex 0.169 and later), learnt from `initialize`. */
  get protocolGeneration(): 1 | 2 {
    return this.generation.value;
  }

  /**
   * Writes to a process's stdin by id (`closeStdin` ends it after the bytes).
   * Generation 2 servers get a fresh `writeId` with each write.
   */
  async write(processId: string, bytes: Uint8Array, options: { closeStdin?: boolean } = {}): Promise<WriteStatus> {
    const chunk = Buffer.from(bytes).toString('base64');
    const params = { processId, chunk, ...this.generation.writeMembers(processId), ...(options.closeStdin ? { closeStdin: true } : {}) };
    return (await this.call<{ status: WriteStatus }>(Method.ProcessWrite, params)).status;
  }

  environmentInfo(): Promise<EnvironmentInfoResult> {
    return this.call(Method.EnvironmentInfo, {});
  }

  async readFile(file: string): Promise<Buffer> {
    const { dataBase64 } = await this.call<{ dataBase64: string }>(Method.FsReadFile, { path: this.generation.path(file) });
    return Buffer.from(dataBase64, 'base64');
  }

  async writeFile(file: string, data: Uint8Array | string): Promise<void> {
    await this.call(Method.FsWriteFile, { path: this.generation.path(file), dataBase64: Buffer.from(data).toString('base64') });
  }

  async createDirectory(dir: string, options: { recursive?: boolean } = {}): Promise<void> {
    await this.call(Method.FsCreateDirectory, { path: this.generation.path(dir), recursive: options.recursive ?? true });
  }

  getMetadata(file: string): Promise<FsMetadataResult> {
    return this.call(Method.FsGetMetadata, { path: this.generation.path(file) });
  }

  async readDirectory(dir: string): Promise<FsDirectoryEntry[]> {
    return (await this.call<{ entries: FsDirectoryEntry[] }>(Method.FsReadDirectory, { path: this.generation.path(dir) })).entries;
  }

  async remove(target: string, options: { recursive?: boolean; force?: boolean } = {}): Promise<void> {
    await this.call(Method.FsRemove, { path: this.generation.path(target), recursive: options.recursive ?? true, force: options.force ?? true });
  }

  async copy(sourcePath: string, destinationPath: string, options: { recursive: boolean }): Promise<void> {
    const paths = { sourcePath: this.generation.path(sourcePath), destinationPath: this.generation.path(destinationPath) };
    await this.call(Method.FsCopy, { ...paths, recursive: options.recursive });
  }

  async canonicalize(file: string): Promise<string> {
    const { path: answer } = await this.call<{ path: string }>(Method.FsCanonicalize, { path: this.generation.path(file) });
    return this.generation.fromServer(answer);
  }

  async httpRequest(options: HttpRequestOptions): Promise<HttpResponse> {
    const result = await this.call<{ status: number; headers: HttpHeader[]; bodyBase64: string }>(
      Method.HttpRequest,
      httpParams(options, false),
    );
    return { status: result.status, headers: result.headers, body: Buffer.from(result.bodyBase64, 'base64') };
  }

  /** Like `httpRequest`, but resolves at the headers and streams the body. */
  async httpRequestStream(options: HttpRequestOptions): Promise<HttpStreamResponse> {
    const params = httpParams(options, true);
    const queue = new EventQueue<Buffer | Error>();
    this.bodies.set(params.requestId, queue);
    try {
      const result = await this.call<{ status: number; headers: HttpHeader[] }>(Method.HttpRequest, params);
      return { status: result.status, headers: result.headers, body: bodyIterable(queue) };
    } catch (error) {
      this.bodies.delete(params.requestId);
      throw error;
    }
  }

  /**
   * Ends the connection. A spawned server gets its stdin closed, a short
   * grace period, then its whole process group is killed.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.child) await this.child.shutdown();
      else this.output.end();
      this.onDisconnect('client closed');
    })();
    return this.closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function httpParams(options: HttpRequestOptions, streamResponse: boolean) {
  return {
    method: options.method,
    url: options.url,
    requestId: options.requestId ?? randomUUID(),
    headers: options.headers ?? [],
    bodyBase64: options.body === undefined ? null : Buffer.from(options.body).toString('base64'),
    timeoutMs: options.timeoutMs ?? null,
    streamResponse,
  };
}

async function* bodyIterable(queue: EventQueue<Buffer | Error>): AsyncGenerator<Buffer> {
  for await (const item of queue) {
    if (item instanceof Error) throw item;
    yield item;
  }
}
