/**
 * One server connection over a pair of byte streams (stdin/stdout for the
 * CLI): vscode-jsonrpc dispatches, our line framing reads and writes, the
 * method table does the work.
 *
 * Lifecycle of the connection:
 * - every request read gets exactly one response, also after EOF (EXT-DRAIN);
 * - then remaining processes are killed and their `exited`/`closed` flushed;
 * - `done` resolves with the exit status once stdout has taken everything.
 */
import type { Readable, Writable } from 'node:stream';
import { createMessageConnection, ResponseError, type MessageConnection } from 'vscode-jsonrpc/node';
import { releasePayloads } from '../protocol/decoded-payloads.js';
import { decodeParams } from '../protocol/decode.js';
import { Errors, ProtocolError } from '../protocol/errors.js';
import { gateFamily, Method, Notification } from '../protocol/methods.js';
import * as S from '../protocol/schemas.js';
import type { OutputStream } from '../protocol/types.js';
import { LineMessageReader } from '../transport/line-reader.js';
import { LineMessageWriter } from '../transport/line-writer.js';
import { CountingReader, CountingWriter } from './drain-counters.js';
import { ClientGeneration, type Generation } from './client-generation.js';
import { Lifecycle } from './lifecycle.js';
import { silentLogger, type Logger } from './logger.js';
import { method, type MethodTable } from './method-table.js';
import { ProcessManager, type ProcessManagerOptions } from './process/process-manager.js';
import type { ProcessEventSink } from './process/managed-process.js';
import { processMethods } from './process-methods.js';

export interface ExecServerOptions extends ProcessManagerOptions {
  input: Readable;
  output: Writable;
  maxLineBytes?: number;
  logger?: Logger;
  /** Extra methods (filesystem, http), given the connection's notification channel. */
  extraMethods?: (channel: NotificationChannel) => MethodTable;
  /** Work to finish before the server exits (e.g. aborting HTTP streams). */
  onShutdown?: Array<() => Promise<void> | void>;
}

/** What extra methods may use of the connection: notifications with flow control. */
export interface NotificationChannel {
  notify(method: string, params: object): void;
  /** True while the client is not keeping up: producers should pause. */
  isCongested(): boolean;
  /** Called when a congested client has caught up. */
  onResume(listener: () => void): void;
  /** The protocol generation the client has shown so far. */
  generation(): Generation;
}

export class ExecServer {
  readonly done: Promise<number>;
  private resolveDone!: (code: number) => void;
  private readonly reader: LineMessageReader;
  private readonly writer: LineMessageWriter;
  private readonly connection: MessageConnection;
  private readonly lifecycle = new Lifecycle();
  private readonly generation = new ClientGeneration();
  private readonly processes: ProcessManager;
  private readonly methods: MethodTable;
  private readonly logger: Logger;
  private requestsRead = 0;
  private responsesWritten = 0;
  private inputEnded = false;
  private shuttingDown = false;
  private signalsSeen = 0;
  private outputBroken = false;

  constructor(private readonly options: ExecServerOptions) {
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.logger = options.logger ?? silentLogger;
    this.writer = new CountingWriter(options.output, () => this.onResponseWritten());
    this.reader = new LineMessageReader(options.input, {
      maxLineBytes: options.maxLineBytes,
      onInvalidLine: (error) => {
        this.logger.debug(`rejected input line: ${error.message}`);
        void this.writer.writeRaw({ id: null, error: error.toJSON() });
      },
      onEnd: () => this.onInputEnd(),
      closeOnEnd: false,
      largeRequests: true,
    });
    this.processes = new ProcessManager(this.processSink(), options);
    this.methods = {
      [Method.Initialize]: method(S.InitializeParams, 'InitializeParams', (params) => this.lifecycle.initialize(params)),
      ...processMethods(this.processes, () => this.generation.value),
      ...(options.extraMethods?.({
        notify: (name, params) => this.notify(name, params),
        isCongested: () => this.writer.congested,
        onResume: (listener) => this.writer.onDrain(listener),
        generation: () => this.generation.value,
      }) ?? {}),
    };
    this.connection = createMessageConnection(new CountingReader(this.reader, () => this.requestsRead++), this.writer, this.logger);
    this.connection.onRequest((name, params) => this.dispatch(name, params));
    this.connection.onNotification((name, params) => {
      releasePayloads(params);
      if (name === Method.Initialized) this.lifecycle.initialized();
      else this.logger.debug(`ignored notification ${name}`);
    });
    this.connection.onError(([error]) => this.logger.debug(`connection error: ${error.message}`));
    this.writer.onError(() => this.onOutputBroken());
    this.writer.onDrain(() => this.processes.resumeAll());
  }

  /** Starts reading requests. */
  listen(): this {
    this.connection.listen();
    return this;
  }

  /**
   * A shutdown signal (EXT-SIGNALS): stop reading, answer long-polls now,
   * then drain. A second signal kills everything and ends at once.
   */
  handleSignal(signal: NodeJS.Signals): void {
    this.signalsSeen++;
    this.logger.info(`received ${signal}`);
    if (this.signalsSeen > 1) {
      this.processes.killAll();
      this.finish(0);
      return;
    }
    this.processes.releaseWaiters();
    this.reader.stop();
  }

  private async dispatch(name: string, params: unknown): Promise<unknown> {
    try {
      const handler = Object.hasOwn(this.methods, name) ? this.methods[name] : undefined;
      if (!handler) throw Errors.methodNotFound(name);
      this.generation.observe(name, params);
      const decoded = decodeParams(handler.schema, params, handler.struct);
      const family = gateFamily(name);
      if (family) this.lifecycle.checkGate(family);
      return await handler.run(decoded);
    } catch (error) {
      if (error instanceof ProtocolError) throw new ResponseError(error.code, error.message);
      this.logger.error(`${name} failed: ${(error as Error)?.stack ?? String(error)}`);
      const internal = Errors.internal((error as Error)?.message ?? String(error));
      throw new ResponseError(internal.code, internal.message);
    } finally {
      releasePayloads(params); // a payload decoded ahead that no method claimed (see large-line.ts)
    }
  }

  private notify(name: string, params: object): void {
    if (this.outputBroken) return;
    void this.writer.writeRaw({ method: name, params });
    if (this.writer.congested) this.processes.pauseAll();
  }

  /** `process/output` goes out pre-serialized (see transport/output-line.ts). */
  private notifyOutput(processId: string, seq: number, stream: OutputStream, bytes: Buffer): void {
    if (this.outputBroken) return;
    this.writer.writeOutput(processId, seq, stream, bytes);
    if (this.writer.congested) this.processes.pauseAll();
  }

  private processSink(): ProcessEventSink {
    return {
      output: (processId: string, seq: number, stream: OutputStream, bytes: Buffer) =>
        this.notifyOutput(processId, seq, stream, bytes),
      exited: (processId: string, seq: number, exitCode: number, sandboxDenied: boolean) =>
        this.notify(Notification.ProcessExited, this.generation.value === 2 ? { processId, seq, exitCode, sandboxDenied } : { processId, seq, exitCode }),
      generation: () => this.generation.value,
      closed: (processId: string, seq: number) => this.notify(Notification.ProcessClosed, { processId, seq }),
    };
  }

  private onInputEnd(): void {
    this.inputEnded = true;
    this.maybeShutdown();
  }

  private onResponseWritten(): void {
    this.responsesWritten++;
    this.maybeShutdown();
  }

  /** EXT-DRAIN: once input ended and every request read has its answer. */
  private maybeShutdown(): void {
    if (!this.inputEnded || this.shuttingDown) return;
    // Requests already read may still sit in vscode-jsonrpc's queue: let it dispatch them.
    setImmediate(() => {
      if (this.shuttingDown || this.responsesWritten < this.requestsRead) return;
      this.shuttingDown = true;
      void this.shutdown();
    });
  }

  private async shutdown(): Promise<void> {
    await Promise.all([this.processes.shutdown(), ...(this.options.onShutdown ?? []).map((task) => task())]);
    // An empty write calls back once everything before it is flushed.
    this.options.output.write('', () => this.finish(0));
  }

  private onOutputBroken(): void {
    if (this.outputBroken) return;
    this.outputBroken = true;
    this.shuttingDown = true;
    this.logger.info('stdout closed; killing all processes');
    this.processes.killAll();
    this.finish(0);
  }

  private finish(code: number): void {
    this.connection.dispose();
    this.resolveDone(code);
  }
}
