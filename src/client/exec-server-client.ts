/**
 * `ExecServerClient`: a typed client for any stdio exec-server (ours or the
 * reference), over a spawned server or a pair of streams.
 *
 * It speaks through vscode-jsonrpc with the same line framing as the server,
 * routes notifications to process sessions (which restore seq order), and
 * turns a broken transport into events and rejections rather than hangs.
 */
import { randomUUID } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { createMessageConnection, ResponseError, type MessageConnection } from 'vscode-jsonrpc/node';
import { packageFile } from '../package/files.js';
import { bytesOf } from '../protocol/base64-payload.js';
import { Errors } from '../protocol/errors.js';
import type { MethodName, ParamsOf, ProducedResultOf, ResultOf } from '../protocol/methods.js';
import { Notification, type NotificationName, type NotificationParamsOf } from '../protocol/notifications.js';
import { LineMessageReader } from '../transport/line-reader.js';
import { LineMessageWriter } from '../transport/line-writer.js';
import { decodeOutputLine, type OutputLine } from '../transport/output-line.js';

import { ClientErrors, type ExecServerClientError } from './errors.js';
import { boundedHandshake } from './handshake.js';
import { HttpBodies, httpParams } from './http-bodies.js';
import {
  DEFAULT_INITIALIZE_TIMEOUT_MS,
  type ConnectOptions,
  type HttpRequestOptions,
  type HttpResponse,
  type HttpStreamResponse,
  type SpawnOptions,
  type StartOptions,
} from './options.js';
import { ProcessSession, type SessionBackend } from './process-session.js';
import { ProtocolFacade } from './protocol-facade.js';
import { runProcess, type RunOptions, type RunResult } from './run.js';
import { ServerChild } from './server-child.js';
import { ServerGeneration } from './server-generation.js';
import { openWebSocket } from './websocket.js';

/** This package's CLI (bundled), wherever this code runs from. */
const ownCli = (): string => packageFile('dist/cli/main.js');

export class ExecServerClient extends ProtocolFacade implements AsyncDisposable {
  /** The `sessionId` the server returned from `initialize`. */
  sessionId = '';
  /** The server's protocol generation, learnt from `initialize`. */
  private generation = new ServerGeneration(1, undefined);
  private readonly connection: MessageConnection;
  private readonly sessions = new Map<string, ProcessSession>();
  private readonly bodies = new HttpBodies();
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
    super();
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
    const args = options.command === undefined ? [ownCli(), ...(options.args ?? [])] : (options.args ?? []);
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

  /**
   * Connects to a server listening on WebSocket (`exec-server --listen ws://…`,
   * or Codex's), with `token` as the Bearer token when given.
   */
  static async connectWebSocket(url: string, options: ConnectOptions & { token?: string } = {}): Promise<ExecServerClient> {
    const { input, output } = await openWebSocket(url, options.token);
    return ExecServerClient.connect(input, output, options);
  }

  /** Talks to a server over existing streams (in-process servers, tests, ssh pipes). */
  static async connect(readable: Readable, writable: Writable, options: ConnectOptions = {}): Promise<ExecServerClient> {
    const client = new ExecServerClient(readable, writable);
    await client.handshake(options);
    return client;
  }

  private async handshake(options: ConnectOptions, child?: ServerChild): Promise<void> {
    const initialize = this.call('initialize', {
      clientName: options.clientName ?? 'exec-server-client',
      resumeSessionId: options.resumeSessionId ?? null,
    });
    try {
      const result = await boundedHandshake(initialize, options.initializeTimeoutMs ?? DEFAULT_INITIALIZE_TIMEOUT_MS, child);
      this.sessionId = result.sessionId;
      this.generation = ServerGeneration.fromInitialize(result, options.protocolGeneration);
      await this.connection.sendNotification(Notification.Initialized, {});
    } catch (error) {
      if (this.violation !== undefined) throw ClientErrors.protocolViolation(this.violation);
      throw error;
    }
  }

  // ---- transport events ----

  private onNotification(method: string, params: unknown): void {
    const is = <N extends NotificationName>(name: N, _params: unknown): _params is NotificationParamsOf<N> => method === name;
    if (is(Notification.ProcessOutput, params)) this.routeOutput({ ...params, chunk: Buffer.from(params.chunk, 'base64') });
    else if (is(Notification.ProcessExited, params))
      this.sessions.get(params.processId)?.receive({ type: 'exited', seq: params.seq, exitCode: params.exitCode });
    else if (is(Notification.ProcessClosed, params)) this.sessions.get(params.processId)?.receive({ type: 'closed', seq: params.seq });
    else if (is(Notification.HttpBodyDelta, params)) this.bodies.receive(params);
    // anything else is ignored
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
    this.bodies.failAll(this.failure.message);
    this.connection.dispose();
    if (this.child && !this.closing) void this.child.kill();
  }

  // ---- calls ----

  protected call<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ProducedResultOf<M>> {
    return this.send(method, params) as Promise<ProducedResultOf<M>>;
  }

  protected speech(): ServerGeneration {
    return this.generation;
  }

  private async send(method: string, params: unknown): Promise<unknown> {
    if (this.failure) throw this.failure;
    try {
      return await Promise.race([this.connection.sendRequest(method, params), this.disconnected]);
    } catch (error) {
      if (error instanceof ResponseError) throw ClientErrors.fromServer(error);
      if (this.failure) throw this.failure;
      throw error;
    }
  }

  /**
   * Sends any request and returns its raw result (base64 stays base64):
   * typed for the methods of the protocol table, untyped for others.
   */
  request<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>>;
  request<T = unknown>(method: string, params?: unknown): Promise<T>;
  request(method: string, params?: unknown): Promise<unknown> {
    return this.send(method, params);
  }

  /** Starts a process and returns its session (events in seq order). */
  async start(options: StartOptions): Promise<ProcessSession> {
    if (this.failure) throw this.failure;
    const processId = options.processId ?? randomUUID();
    if (this.sessions.has(processId)) throw ClientErrors.fromServer(Errors.processExists(processId));
    const session = new ProcessSession(processId, options.tty ?? false, this.backend, options.bufferEvents ?? true);
    // Registered before the request: notifications may precede the response.
    this.sessions.set(processId, session);
    session.onFinished = () => {
      if (this.sessions.get(processId) === session) this.sessions.delete(processId);
    };
    try {
      await this.call('process/start', {
        processId,
        argv: options.argv,
        cwd: this.generation.cwd(options.cwd ?? process.cwd()),
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
    read: (processId, options) => this.readProcess(processId, options),
    write: (processId, bytes, closeStdin) => this.write(processId, bytes, { closeStdin }),
    terminate: (processId) => this.terminate(processId),
    resize: (processId, rows, cols) => this.resize(processId, rows, cols),
    signal: (processId, signal) => this.signal(processId, signal),
  };

  /** The protocol generation the server speaks (2 for Codex 0.169 and later), learnt from `initialize`. */
  get protocolGeneration(): 1 | 2 {
    return this.generation.value;
  }

  /** How this server wants paths and writes; executors built on this client speak the same. */
  get serverGeneration(): ServerGeneration {
    return this.generation;
  }

  /** Makes an HTTP request from the server's machine and collects the body. */
  async httpRequest(options: HttpRequestOptions): Promise<HttpResponse> {
    const result = await this.call('http/request', httpParams(options, false));
    return { status: result.status, headers: result.headers, body: bytesOf(result.bodyBase64) };
  }

  /** Like `httpRequest`, but resolves at the headers and streams the body. */
  async httpRequestStream(options: HttpRequestOptions): Promise<HttpStreamResponse> {
    const params = httpParams(options, true);
    const body = this.bodies.open(params.requestId);
    try {
      const result = await this.call('http/request', params);
      return { status: result.status, headers: result.headers, body };
    } catch (error) {
      this.bodies.discard(params.requestId);
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
