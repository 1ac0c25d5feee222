/**
 * One client connection's session, without a transport: its handshake state,
 * the generation it speaks, HTTP streams, file handles, decoded payloads, the
 * dispatcher that runs its requests, and the process table it attached to at
 * `initialize` (new, or a dropped connection's resumed from the registry).
 * `ExecServer` puts it behind JSON-RPC lines; `LocalExecutor` calls it directly.
 */
import { Notification, type NotificationName, type NotificationParamsOf } from '../protocol/notifications.js';
import { Errors } from '../protocol/errors.js';
import { Method } from '../protocol/method-names.js';
import { PayloadStash } from '../protocol/payload-stash.js';
import type { OutputStream } from '../protocol/types.js';
import { ClientGeneration, type Generation } from './client-generation.js';
import { Dispatcher } from './dispatcher.js';
import { AnswerBudget } from './answer-budget.js';
import type { AnsweredInitialize } from './early-initialize.js';
import { FileHandles } from './fs/file-handles.js';
import { MissingWatches } from './fs/missing-watch.js';
import { FsSandbox } from './sandbox/confined-fs.js';
import { serverHandlers } from './handlers/index.js';
import type { ExtraCaCerts } from './http/trusted-cas.js';
import { HttpClient } from './http/http-client.js';
import { Lifecycle } from './lifecycle.js';
import { silentLogger, type Logger } from './logger.js';
import type { ProcessEventSink } from './process/managed-process.js';
import type { ProcessManager, ProcessManagerOptions } from './process/process-manager.js';
import { sandboxSupport } from './sandbox/bwrap.js';
import { type Release, SessionRegistry } from './session-registry.js';

/** Where a session's notifications go, and whether their reader keeps up. */
export interface NotificationChannel {
  notify<N extends NotificationName>(name: N, params: NotificationParamsOf<N>): void;
  /** `process/output`, with its bytes raw (a server's writer encodes them itself). */
  output(processId: string, seq: number, stream: OutputStream, bytes: Buffer): void;
  /** True while the reader is not keeping up: producers should pause. */
  isCongested(): boolean;
  /** Called when a congested reader has caught up. */
  onResume(listener: () => void): void;
}

export interface ServerSessionOptions extends ProcessManagerOptions {
  logger?: Logger;
  /** The generation to answer in from the start (default 1, until the client shows 2). */
  generation?: Generation;
  /** Where sessions live between connections (default: one of this session's own, which ends with it). */
  sessions?: SessionRegistry;
  /** NODE_EXTRA_CA_CERTS's certificates, which Node did not read at start: `http/request` trusts them (see `http/trusted-cas.ts`). */
  extraCaCerts?: ExtraCaCerts;
  /** How long an HTTP request without a timeout may wait for its answer once input ended (default `INPUT_END_GRACE_MS`). */
  httpInputEndGraceMs?: number;
  /**
   * Bytes of file contents answers may hold until the line writer has sent them (`answer-budget.ts`).
   * Default: no limit, for a session whose answers no line writer sends (an in-process executor's).
   */
  answerBudgetBytes?: number;
}

export class ServerSession {
  readonly lifecycle = new Lifecycle();
  readonly generation: ClientGeneration;
  readonly payloads = new PayloadStash();
  private readonly sessions: SessionRegistry;
  /** Set by `initialize`; cleared when the connection lets go of it. */
  private attachment: { sessionId: string; processes: ProcessManager } | undefined;
  private readonly http: HttpClient;
  private readonly files = new FileHandles();
  private readonly answers: AnswerBudget;
  private readonly sandbox: FsSandbox;
  private readonly watches = new MissingWatches((watchId) => this.notify(Notification.FsMissingChanged, { watchId }));
  private readonly dispatcher: Dispatcher;
  private readonly httpInputEndGraceMs: number | undefined;
  private readonly logger: Logger;
  /** The id the next new session takes, set by `adopt`. */
  private adoptedSessionId: string | undefined;

  constructor(
    private readonly channel: NotificationChannel,
    options: ServerSessionOptions,
  ) {
    this.generation = new ClientGeneration(options.generation);
    this.httpInputEndGraceMs = options.httpInputEndGraceMs;
    this.answers = new AnswerBudget(options.answerBudgetBytes ?? Number.POSITIVE_INFINITY);
    this.sandbox = new FsSandbox(options.bwrap, options.serverEnv?.TMPDIR ?? process.env.TMPDIR, options.runtime);
    this.sessions = options.sessions ?? new SessionRegistry({ detachedTtlMs: 0, processes: options });
    this.http = new HttpClient(
      {
        notify: (name, params) => this.notify(name, params),
        isCongested: () => channel.isCongested(),
        onResume: (listener) => channel.onResume(listener),
      },
      options.serverEnv,
      options.extraCaCerts,
      this.answers,
    );
    channel.onResume(() => this.attachment?.processes.resumeAll());
    const handlers = serverHandlers({
      lifecycle: this.lifecycle,
      attach: (resumeSessionId) => this.attach(resumeSessionId),
      processes: () => this.attachedProcesses(),
      sandboxSupport: () => sandboxSupport(options.runtime.bwraps.find(options.bwrap), options.bwrap),
      http: this.http,
      files: this.files,
      answers: this.answers,
      watches: this.watches,
      sandbox: this.sandbox,
      generation: () => this.generation.value,
    });
    this.logger = options.logger ?? silentLogger;
    this.dispatcher = new Dispatcher(handlers, {
      lifecycle: this.lifecycle,
      generation: this.generation,
      payloads: this.payloads,
      logger: this.logger,
    });
  }

  /**
   * Takes over an `initialize` the CLI answered before this session existed
   * (`early-initialize.ts`): the request runs here as any other, in order
   * before the requests after it, under the session id the answer gave; its
   * second answer is dropped.
   */
  adopt(answered: AnsweredInitialize): void {
    this.adoptedSessionId = answered.sessionId;
    this.dispatcher.dispatch(Method.Initialize, answered.params).catch((error: Error) => {
      this.logger.error(`the initialize the CLI answered failed here: ${error.message}`);
    });
  }

  /** Runs a request; rejects with a `ProtocolError` only. */
  dispatch(name: string, params: unknown): Promise<unknown> {
    return this.dispatcher.dispatch(name, params);
  }

  notification(name: string, params: unknown): void {
    this.dispatcher.notification(name, params);
  }

  /** The id of the session `initialize` attached, until the connection lets go of it. */
  get sessionId(): string | undefined {
    return this.attachment?.sessionId;
  }

  /** The process table, once `initialize` attached one (every `process/*` request comes after it). */
  private attachedProcesses(): ProcessManager {
    if (!this.attachment) throw Errors.internal('no session is attached');
    return this.attachment.processes;
  }

  /** Ends pending long-polls now, with their current state (EXT-SIGNALS). */
  releaseWaiters(): void {
    this.attachment?.processes.releaseWaiters();
  }

  /** End of input, before the drain: HTTP requests without a timeout get a last while to answer (`HttpClient.inputEnded`). */
  inputEnded(): void {
    this.http.inputEnded(this.httpInputEndGraceMs);
  }

  /** End of input: kills what still runs and waits for its last events; aborts HTTP streams; closes open files. */
  async shutdown(): Promise<void> {
    this.watches.close();
    this.sandbox.stopAll();
    await Promise.all([this.release('drain'), this.http.shutdown(), this.files.closeAll()]);
  }

  /**
   * Ends everything at once, without waiting: `kill` when nobody can be told
   * any more (stdout broke, a second signal, a clean close); `detach` when the
   * transport dropped, so that the process table waits for a resume (if the
   * registry keeps detached sessions).
   */
  abort(how: 'kill' | 'detach' = 'kill'): void {
    void this.release(how);
    this.watches.close();
    this.sandbox.stopAll();
    this.http.shutdown();
    void this.files.closeAll();
  }

  private attach(resumeSessionId: string | undefined): string {
    const adopted = this.adoptedSessionId;
    this.adoptedSessionId = undefined;
    const { sessionId, processes, generation } = this.sessions.attach(resumeSessionId, this.processSink(), adopted);
    this.attachment = { sessionId, processes: processes.manager };
    // A resumed session keeps the generation its client showed: its processes' answers must not change shape.
    this.generation.atLeast(generation);
    return sessionId;
  }

  private release(how: Release): Promise<void> {
    const attachment = this.attachment;
    this.attachment = undefined;
    return attachment ? this.sessions.release(attachment.sessionId, how) : Promise.resolve();
  }

  private notify<N extends NotificationName>(name: N, params: NotificationParamsOf<N>): void {
    this.channel.notify(name, params);
    if (this.channel.isCongested()) this.attachment?.processes.pauseAll();
  }

  private processSink(): ProcessEventSink {
    return {
      output: (processId, seq, stream, bytes) => {
        this.channel.output(processId, seq, stream, bytes);
        if (this.channel.isCongested()) this.attachment?.processes.pauseAll();
      },
      exited: (processId, seq, exitCode, sandboxDenied) =>
        this.notify(
          Notification.ProcessExited,
          this.generation.value === 2 ? { processId, seq, exitCode, sandboxDenied } : { processId, seq, exitCode },
        ),
      closed: (processId, seq) => this.notify(Notification.ProcessClosed, { processId, seq }),
      generation: () => this.generation.value,
    };
  }
}
