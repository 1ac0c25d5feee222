/**
 * `ExecServerClient`: a typed client for any stdio exec-server (ours or the
 * reference), over a spawned server or a pair of streams.
 *
 * It speaks through vscode-jsonrpc with the same line framing as the server,
 * routes notifications to process sessions (which restore seq order, and
 * hold the server back while a consumer is behind), and turns a broken
 * transport into events and rejections rather than hangs. Over WebSocket it
 * can resume its session after a drop (`reconnect`).
 */
import type { Readable, Writable } from 'node:stream';
import { ResponseError } from 'vscode-jsonrpc/node';
import { deferExtraCaCerts } from '../package/extra-ca-certs.js';
import { packageFile } from '../package/files.js';
import { bytesOf, payloadsAsText } from '../protocol/base64-payload.js';
import type { MethodName, ParamsOf, ProducedResultOf, ResultOf, SentParamsOf } from '../protocol/methods.js';
import { Notification } from '../protocol/notifications.js';
import { ClientErrors, type ExecServerClientError } from './errors.js';
import { completeHandshake } from './handshake.js';
import { EventRouter } from './event-router.js';
import { httpParams } from './http-bodies.js';
import { Link, LinkDropped, type LinkTransport } from './link.js';
import { PendingCalls } from './pending-calls.js';
import {
  DEFAULT_INITIALIZE_TIMEOUT_MS,
  type ConnectOptions,
  type HttpRequestOptions,
  type HttpResponse,
  type HttpStreamResponse,
  type SpawnOptions,
  type StartOptions,
  type WebSocketConnectOptions,
} from './options.js';
import type { ProcessSession } from './process-session.js';
import { ProtocolFacade } from './protocol-facade.js';
import { DEFAULT_RECONNECT_WINDOW_MS, mayRetry, type ReconnectOptions, resumeOnNewLink } from './reconnect.js';
import { ResumeTurns } from './resume-turns.js';
import { runProcess, type RunOptions, type RunResult } from './run.js';
import { startProcess } from './start-process.js';
import { ServerChild } from './server-child.js';
import { ServerGeneration } from './server-generation.js';
import { openWebSocket } from './websocket.js';

export class ExecServerClient extends ProtocolFacade implements AsyncDisposable {
  /** The `sessionId` the server returned from `initialize`. */
  sessionId = '';
  /** The server's protocol generation, learnt from `initialize`. */
  private generation = new ServerGeneration(1, undefined);
  private link: Link;
  private readonly events = new EventRouter(
    (error) => this.onViolation(error),
    () => this.link.hold(),
  );
  private failure: ExecServerClientError | undefined;
  /** Every call in flight, failed at once when the client disconnects. */
  private readonly calls = new PendingCalls();
  private closing: Promise<void> | undefined;
  private violation: ExecServerClientError | undefined;
  /** How to open a new connection and resume, when `reconnect` is on. */
  private resumer: (ReconnectOptions & { open: (handshakeTimeoutMs: number) => Promise<LinkTransport>; windowMs: number }) | undefined;
  /** Settles once a dropped connection is replaced (or given up on); calls then go on in their order (`turns`). */
  private relinking: Promise<void> | undefined;
  private readonly turns = new ResumeTurns();
  private options: ConnectOptions = {};

  private constructor(
    transport: LinkTransport,
    private readonly child?: ServerChild,
  ) {
    super();
    this.link = this.newLink(transport);
  }

  private newLink(transport: LinkTransport): Link {
    const link: Link = new Link(transport, {
      notification: (method, params) => this.events.notification(method, params),
      preview: (line) => this.events.preview(line),
      invalidLine: (line) => this.onViolation(ClientErrors.protocolViolation(line)),
      dropped: (reason) => this.onLinkDropped(link, reason),
      onlyHeldWait: () => this.events.sessions.size + this.events.bodies.streaming <= 1,
    });
    return link;
  }

  /** Spawns a server (default: this package's CLI, bundled, wherever this code runs from) and completes the handshake. */
  static async spawn(options: SpawnOptions = {}): Promise<ExecServerClient> {
    const command = options.command ?? process.execPath;
    const args = options.command === undefined ? [packageFile('dist/cli/main.js'), ...(options.args ?? [])] : (options.args ?? []);
    let child: ServerChild;
    try {
      // Our own server gets NODE_EXTRA_CA_CERTS under another name: it starts without reading it.
      const env = options.command === undefined ? deferExtraCaCerts(options.env) : options.env;
      child = await ServerChild.spawn({ command, args, env, cwd: options.cwd });
    } catch (error) {
      throw ClientErrors.spawnFailed(command, (error as Error).message);
    }
    const client = new ExecServerClient({ input: child.stdout, output: child.stdin }, child);
    await client.handshake(options, child);
    return client;
  }

  /**
   * Connects to a server listening on WebSocket (`exec-server --listen ws://…`,
   * or Codex's), with `token` as the Bearer token when given. With
   * `reconnect`, a dropped connection is replaced by a new one that resumes
   * the session (generation 2 servers): process sessions go on from their
   * last seq, requests that may be repeated are sent again, others reject.
   */
  static async connectWebSocket(url: string, options: WebSocketConnectOptions = {}): Promise<ExecServerClient> {
    const open = (handshakeTimeoutMs: number) => openWebSocket(url, options.token, handshakeTimeoutMs);
    const client = new ExecServerClient(await open(options.initializeTimeoutMs ?? DEFAULT_INITIALIZE_TIMEOUT_MS));
    await client.handshake(options, undefined, true);
    if (options.reconnect) {
      const reconnect = options.reconnect === true ? {} : options.reconnect;
      client.resumer = { ...reconnect, open, windowMs: reconnect.windowMs ?? DEFAULT_RECONNECT_WINDOW_MS };
    }
    return client;
  }

  /** Talks to a server over existing streams (in-process servers, tests, ssh pipes). */
  static async connect(readable: Readable, writable: Writable, options: ConnectOptions = {}): Promise<ExecServerClient> {
    const client = new ExecServerClient({ input: readable, output: writable });
    await client.handshake(options);
    return client;
  }

  /** On failure, what this client opened goes (nobody else can end it): a spawned `child` killed, an `owned` socket closed. */
  private async handshake(options: ConnectOptions, child?: ServerChild, owned = false): Promise<void> {
    this.options = options;
    try {
      const result = await completeHandshake({
        initialize: this.call('initialize', {
          clientName: options.clientName ?? 'exec-server-client',
          resumeSessionId: options.resumeSessionId ?? null,
        }),
        notifyInitialized: () => this.link.notify(Notification.Initialized, {}),
        timeoutMs: options.initializeTimeoutMs ?? DEFAULT_INITIALIZE_TIMEOUT_MS,
        child,
        onMalformed: (error) => this.onViolation(error),
      });
      this.sessionId = result.sessionId;
      this.generation = ServerGeneration.fromInitialize(result, options.protocolGeneration);
    } catch (error) {
      await (child ? child.kill() : owned ? this.close() : undefined);
      throw this.violation ?? error;
    }
  }

  /** The server broke the protocol: it is not to be trusted with anything more, and its group is killed. */
  private onViolation(error: ExecServerClientError): void {
    this.violation ??= error;
    this.fail(`protocol violation: ${error.message}`);
    void this.child?.kill();
  }

  private onLinkDropped(link: Link, reason: string): void {
    if (link !== this.link || this.failure) return;
    const resumable = this.resumer && this.generation.value === 2 && !this.closing && this.violation === undefined;
    if (resumable)
      this.relinking = this.relink(reason).catch(() => undefined); // a throwing onReconnected: ignored
    else this.fail(this.closing ? 'client closed' : reason); // the server ending as asked is no news
  }

  /** Replaces the dropped link with one that resumed the session, then lets every process session catch up. */
  private async relink(reason: string): Promise<void> {
    this.events.bodies.failAll(ClientErrors.disconnected(reason).message); // the server ended the dropped connection's HTTP streams
    const { open, windowMs, onReconnecting, onReconnected } = this.resumer!;
    onReconnecting?.(reason);
    let link: Link;
    try {
      link = await resumeOnNewLink((handshakeTimeoutMs) => open(handshakeTimeoutMs).then((transport) => this.newLink(transport)), {
        sessionId: this.sessionId,
        clientName: this.options.clientName ?? 'exec-server-client',
        initializeTimeoutMs: this.options.initializeTimeoutMs ?? DEFAULT_INITIALIZE_TIMEOUT_MS,
        windowMs,
        stopped: () => this.closing !== undefined,
      });
    } catch (error) {
      this.relinking = undefined;
      this.fail(`${reason}; ${(error as Error).message}`);
      return this.turns.release();
    }
    this.link = link;
    this.relinking = undefined;
    this.turns.release(); // before anything else can be sent on the new link
    if (this.closing) return void link.output.end();
    onReconnected?.();
    await this.events.catchUpStarted();
  }
  /** Fails every session and pending call once, with the canonical message. */
  private fail(reason: string): void {
    if (this.failure) return;
    this.failure = ClientErrors.disconnected(reason);
    this.calls.failAll(this.failure);
    this.events.failAll(this.failure.message);
    this.link.close(reason);
    if (this.child && !this.closing) void this.child.kill();
  }

  protected call<M extends MethodName>(method: M, params: SentParamsOf<M>): Promise<ProducedResultOf<M>> {
    return this.send(method, params) as Promise<ProducedResultOf<M>>;
  }

  protected speech(): ServerGeneration {
    return this.generation;
  }

  protected override holdOutput(): () => void {
    return this.link.hold();
  }

  private async send(method: string, params: unknown): Promise<unknown> {
    const turn = this.turns.take();
    for (;;) {
      if (this.relinking || this.turns.mustWait(turn)) await this.calls.track(this.turns.wait(turn));
      const link = this.link;
      try {
        if (this.failure) throw this.failure;
        const answer = this.calls.track(link.request(method, params));
        this.turns.sent(turn); // written: a later call may go now
        return await answer;
      } catch (error) {
        this.turns.sent(turn);
        if (error instanceof ResponseError) throw ClientErrors.fromServer(error);
        if (this.failure) throw this.failure;
        if (!(error instanceof LinkDropped)) throw error;
        // Dropped, and the client is resuming: sent again only if it may be repeated.
        if (!mayRetry(method, params, error.sent)) throw ClientErrors.outcomeUnknown(method, error.reason);
        // Not sent because the transport is closing: wait for it to be closed (then the client resumes or fails).
        await link.whenDown();
      }
    }
  }

  /**
   * Sends any request and returns its raw result (base64 stays base64): typed for the methods of the protocol
   * table, untyped for others. Params go as given; none, `null` or `[]` as no params; a scalar is a `TypeError`.
   */
  request<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>>;
  request<T = unknown>(method: string, params?: unknown): Promise<T>;
  request(method: string, params?: unknown): Promise<unknown> {
    return this.send(method, params).then(payloadsAsText);
  }

  /** @internal `request` for executors on this client: payload members may be `Base64Payload`s both ways. */
  requestProduced<M extends MethodName>(method: M, params: SentParamsOf<M>): Promise<ProducedResultOf<M>> {
    return this.call(method, params);
  }

  /** Starts a process and returns its session (events in seq order). */
  start(options: StartOptions): Promise<ProcessSession> {
    if (this.failure) return Promise.reject(this.failure);
    const send = (params: ParamsOf<'process/start'>) => this.call('process/start', params);
    return startProcess({ sessions: this.events.sessions, backend: this.backend, generation: this.generation, send }, options);
  }

  /** Runs a command to completion and collects its output. */
  run(argv: string[], options: RunOptions = {}): Promise<RunResult> {
    return runProcess(this, argv, options);
  }
  override connection(): unknown {
    return this.link;
  }
  private readonly backend = this.sessionBackend();

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
    const result = await this.call('http/request', httpParams(options, false, this.generation));
    return { status: result.status, headers: result.headers, body: bytesOf(result.bodyBase64) };
  }

  /** Like `httpRequest`, but resolves at the headers and streams the body. */
  httpRequestStream(options: HttpRequestOptions): Promise<HttpStreamResponse> {
    return this.events.bodies.request(options, this.generation, (params) => this.call('http/request', params));
  }

  /** Ends the connection: a spawned server gets its stdin closed, a short grace, then its whole group killed. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.child) await this.child.shutdown();
      else this.link.output.end();
      this.fail('client closed');
    })();
    return this.closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
