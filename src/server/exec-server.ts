/**
 * One server connection over a pair of byte streams (stdin/stdout for the
 * CLI): vscode-jsonrpc dispatches, our line framing reads and writes, the
 * method table does the work.
 *
 * Lifecycle of the connection:
 * - every request read gets exactly one response, also after EOF (EXT-DRAIN);
 * - then remaining processes are killed and their `exited`/`closed` flushed;
 * - `done` resolves with the exit status once stdout has taken everything.
 * A transport that can drop (a WebSocket) reports it with `transportClosed`:
 * the session then waits in its registry for a resume instead.
 */
import type { Readable, Writable } from 'node:stream';
import { createMessageConnection, ResponseError, type MessageConnection } from 'vscode-jsonrpc/node';
import { ANSWER_BUDGET_BYTES } from '../protocol/defaults.js';
import type { ProtocolError } from '../protocol/errors.js';
import { LineMessageReader } from '../transport/line-reader.js';
import type { LineMessageWriter } from '../transport/line-writer.js';
import { CountingReader, CountingWriter } from './drain-counters.js';
import type { AnsweredInitialize } from './early-initialize.js';
import { InputHold } from './input-hold.js';
import type { ExtraCaCerts } from './http/trusted-cas.js';
import { silentLogger, type Logger } from './logger.js';
import type { ProcessManagerOptions } from './process/process-manager.js';
import { ProcessRuntime } from './process/runtime.js';
import { ServerSession } from './session.js';
import { WireIds } from '../transport/wire-ids.js';
import type { SessionRegistry } from './session-registry.js';

/** How long a signalled server drains before it ends anyway (see `handleSignal`). */
const SIGNAL_DRAIN_MS = 5000;

export interface ExecServerOptions extends Omit<ProcessManagerOptions, 'runtime'> {
  input: Readable;
  output: Writable;
  maxLineBytes?: number;
  /**
   * Bytes of `fs/readFile` answers and buffered HTTP bodies this connection holds for a client
   * that is not reading (default `ANSWER_BUDGET_BYTES`; see `answer-budget.ts`).
   */
  answerBudgetBytes?: number;
  /** The input's lines are messages the peer framed itself (a WebSocket's): a blank one is answered with a parse error, not skipped. */
  blankLinesAreMessages?: boolean;
  logger?: Logger;
  /**
   * The guardian, spawner and PTY registry (see `process/runtime.ts`).
   * Default: a runtime of its own, stopped when the server is done.
   */
  runtime?: ProcessRuntime;
  /** Sessions shared between connections (a WebSocket listener's); default: this connection's own. */
  sessions?: SessionRegistry;
  /**
   * Called once the first answer is written (the CLI then readies its runtime, off the handshake's
   * path). After an `answeredInitialize`: once the next answer is written, or `READY_AFTER_MS`
   * after `listen` if none was by then, so that it does not delay a request already waiting.
   */
  afterFirstAnswer?: () => void;
  /** An `initialize` the CLI read and answered before this server existed: taken over as if answered here (`early-initialize.ts`). */
  answeredInitialize?: AnsweredInitialize;
  /** NODE_EXTRA_CA_CERTS's certificates, which Node did not read at start: `http/request` trusts them (see `http/trusted-cas.ts`). */
  extraCaCerts?: ExtraCaCerts;
  /** How long an `http/request` without a timeout may still wait for its answer after the end of input (default 30 s). */
  httpInputEndGraceMs?: number;
}

/**
 * After an `answeredInitialize`, how long `afterFirstAnswer` waits for an answer of the server's
 * own: a client that sends nothing yet (Codex sends its first command seconds later) still gets a
 * ready runtime long before it needs one, and a first `process/start` readies it itself.
 */
const READY_AFTER_MS = 25;

export class ExecServer {
  readonly done: Promise<number>;
  private resolveDone!: (code: number) => void;
  private readonly reader: LineMessageReader;
  private readonly writer: LineMessageWriter;
  private readonly hold: InputHold;
  private readonly counted: CountingReader;
  /** Request ids that go through under an alias (beyond 2^53, or repeated while unanswered). */
  private readonly ids = new WireIds();
  private readonly connection: MessageConnection;
  private readonly session: ServerSession;
  private readonly runtime: ProcessRuntime;
  private readonly ownsRuntime: boolean;
  private readonly logger: Logger;
  private requestsRead = 0;
  private responsesWritten = 0;
  private firstAnswered = false;
  private readyTimer: NodeJS.Timeout | undefined;
  private inputEnded = false;
  private shuttingDown = false;
  private signalsSeen = 0;
  private drainDeadline: NodeJS.Timeout | undefined;
  private outputBroken = false;
  private finished = false;

  constructor(private readonly options: ExecServerOptions) {
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.logger = options.logger ?? silentLogger;
    this.writer = new CountingWriter(options.output, this.ids, (id) => this.onResponseWritten(id));
    this.hold = new InputHold(
      () => this.counted.boundedUnanswered,
      () => this.writer.congested,
    );
    this.ownsRuntime = options.runtime === undefined;
    this.runtime = options.runtime ?? new ProcessRuntime();
    this.session = new ServerSession(
      {
        notify: (name, params) => {
          if (!this.outputBroken) void this.writer.writeRaw({ method: name, params });
        },
        output: (processId, seq, stream, bytes) => {
          if (!this.outputBroken) this.writer.writeOutput(processId, seq, stream, bytes);
        },
        isCongested: () => this.writer.congested,
        onResume: (listener) => this.writer.onDrain(listener),
      },
      // Its answers go through the line writer, which gives back what they reserved once they are sent.
      { ...options, runtime: this.runtime, logger: this.logger, answerBudgetBytes: options.answerBudgetBytes ?? ANSWER_BUDGET_BYTES },
    );
    this.reader = new LineMessageReader(options.input, {
      maxLineBytes: options.maxLineBytes,
      blankLinesAreMessages: options.blankLinesAreMessages,
      onInvalidLine: (error) => {
        this.logger.debug(`rejected input line: ${error.message}`);
        void this.writer.writeRaw({ id: null, error: error.toJSON() });
      },
      onEnd: () => this.onInputEnd(),
      closeOnEnd: false,
      payloads: this.session.payloads,
      ids: this.ids,
      holdWhile: () => this.hold.holding,
    });
    this.writer.onDrain(() => this.reader.release());
    this.counted = new CountingReader(this.reader, this.ids, () => this.requestsRead++);
    this.connection = createMessageConnection(this.counted, this.writer, this.logger);
    this.connection.onRequest((name, params) => this.dispatch(name, params));
    this.connection.onNotification((name, params) => this.session.notification(name, params));
    this.connection.onError(([error]) => this.logger.debug(`connection error: ${error.message}`));
    this.writer.onError(() => this.onOutputBroken());
    if (options.answeredInitialize) this.session.adopt(options.answeredInitialize);
  }

  /** The id of the session this connection holds (after `initialize`). */
  get sessionId(): string | undefined {
    return this.session.sessionId;
  }

  /** Starts reading requests. */
  listen(): this {
    this.connection.listen();
    if (this.options.answeredInitialize) this.readyTimer = setTimeout(() => this.onFirstAnswer(), READY_AFTER_MS).unref();
    return this;
  }

  /**
   * A shutdown signal (EXT-SIGNALS): stop reading, answer long-polls now,
   * then drain. A second signal kills everything and ends at once. After
   * SIGNAL_DRAIN_MS the drain stops waiting for answers: a signal asks the
   * server to end, and a request that may never be answered (an HTTP request
   * without a timeout, a call hung on a network file system) must not keep it
   * alive. Processes are then killed and their ends reported, HTTP requests
   * aborted, as at the end of any drain.
   */
  handleSignal(signal: NodeJS.Signals): void {
    this.signalsSeen++;
    this.logger.info(`received ${signal}`);
    if (this.signalsSeen > 1) {
      this.endNow();
      return;
    }
    this.session.releaseWaiters();
    this.reader.stop();
    this.drainDeadline = setTimeout(() => {
      if (this.shuttingDown) {
        // Still writing what is left: a client that stopped reading must not keep the server alive.
        this.logger.warn(`output not flushed ${SIGNAL_DRAIN_MS} ms after ${signal}: ending`);
        this.endNow();
        return;
      }
      this.logger.warn(`${this.requestsRead - this.responsesWritten} requests unanswered ${SIGNAL_DRAIN_MS} ms after ${signal}: ending`);
      void this.shutdown();
    }, SIGNAL_DRAIN_MS);
  }

  private endNow(): void {
    this.session.abort();
    this.finish(0);
  }

  /**
   * The transport is gone (a WebSocket closed): nothing more can be written.
   * `detach` keeps the session's processes for a resume (see
   * `session-registry.ts`); `end` kills them (the client closed cleanly).
   */
  transportClosed(how: 'detach' | 'end'): void {
    if (this.outputBroken) return;
    this.outputBroken = true;
    this.shuttingDown = true;
    this.session.abort(how === 'detach' ? 'detach' : 'kill');
    this.finish(0);
  }

  private dispatch(name: string, params: unknown): Promise<unknown> {
    return this.session.dispatch(name, params).catch((error: ProtocolError) => {
      throw new ResponseError(error.code, error.message);
    });
  }

  private onInputEnd(): void {
    this.inputEnded = true;
    this.session.inputEnded();
    this.maybeShutdown();
  }

  private onResponseWritten(id: unknown): void {
    this.responsesWritten++;
    this.onFirstAnswer();
    this.counted.answered(id);
    this.reader.release();
    this.maybeShutdown();
  }

  private onFirstAnswer(): void {
    if (this.firstAnswered || this.finished) return;
    this.firstAnswered = true;
    clearTimeout(this.readyTimer);
    if (this.options.afterFirstAnswer) setImmediate(this.options.afterFirstAnswer);
  }

  /** EXT-DRAIN: once input ended and every request read has its answer. */
  private maybeShutdown(): void {
    if (!this.inputEnded || this.shuttingDown) return;
    // Requests already read may still sit in vscode-jsonrpc's queue: let it dispatch them.
    setImmediate(() => {
      if (this.responsesWritten < this.requestsRead) return;
      void this.shutdown();
    });
  }

  /** EXT-DRAIN steps 4–6, once. */
  private async shutdown(): Promise<void> {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    await this.session.shutdown();
    // An empty write calls back once everything before it is flushed.
    this.options.output.write('', () => this.finish(0));
  }

  private onOutputBroken(): void {
    if (this.outputBroken) return;
    this.outputBroken = true;
    this.shuttingDown = true;
    this.logger.info('stdout closed; killing all processes');
    this.session.abort();
    this.finish(0);
  }

  private finish(code: number): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.drainDeadline);
    clearTimeout(this.readyTimer); // a runtime readied now would outlive the server
    if (this.ownsRuntime) this.runtime.stop();
    this.connection.dispose();
    this.resolveDone(code);
  }
}
