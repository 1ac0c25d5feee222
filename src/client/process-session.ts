/**
 * A handle on one process started through the client: its methods, and its
 * events in seq order (async iterator, listeners, or stdout/stderr streams).
 *
 * Events published before anyone consumes them are kept and handed to the
 * first consumer (so nothing between `start()` and attaching is lost); later
 * consumers see events from the moment they attach.
 */
import { EventEmitter } from 'node:events';
import type { Readable } from 'node:stream';
import type { OutputStream, ProcessReadResult, WriteStatus } from '../protocol/types.js';
import { catchUp } from './catch-up.js';
import { ClientErrors } from './errors.js';
import type { ProcessEvent } from './process-event.js';
import { SeqOrderer } from './seq-orderer.js';
import { SeqRules } from './seq-rules.js';
import { loopQueue } from './session-iterator.js';
import { type OutputStreams, outputStreams } from './session-streams.js';

export type { ProcessEvent } from './process-event.js';

/** `process/read`'s result with decoded chunks. */
export interface ReadResult extends Omit<ProcessReadResult, 'chunks'> {
  chunks: Array<{ seq: number; stream: OutputStream; chunk: Buffer }>;
}

/** `process/read`'s wire result with its base64 chunks decoded. */
export function decodeReadResult(result: ProcessReadResult): ReadResult {
  return { ...result, chunks: result.chunks.map((c) => ({ ...c, chunk: Buffer.from(c.chunk, 'base64') })) };
}

export interface ReadOptions {
  afterSeq?: number;
  maxBytes?: number;
  waitMs?: number;
}

/** The calls a session makes; implemented by the client. */
export interface SessionBackend {
  read(processId: string, options: ReadOptions): Promise<ReadResult>;
  write(processId: string, bytes: Uint8Array, closeStdin: boolean): Promise<WriteStatus>;
  terminate(processId: string): Promise<boolean>;
  resize(processId: string, rows: number, cols: number): Promise<void>;
  signal(processId: string, signal: string): Promise<void>;
  /** Holds back the server's output until the returned release is called (a consumer is behind). */
  hold(): () => void;
}

type Consumer = (event: ProcessEvent) => void;

const EVENT_NAMES = new Set(['event', 'output', 'exited', 'closed', 'failed']);

export class ProcessSession extends EventEmitter implements AsyncIterable<ProcessEvent> {
  private readonly orderer = new SeqOrderer<Exclude<ProcessEvent, { type: 'failed' }>>((event) => this.publish(event));
  private backlog: ProcessEvent[] | undefined = [];
  private readonly consumers = new Set<Consumer>();
  /** Consumers whose backlog is still to be handed over, with what they are owed, in order. */
  private readonly replays = new Map<Consumer, ProcessEvent[]>();
  /** Internal observers (wait()): they see events but do not take the backlog. */
  private readonly watchers = new Set<Consumer>();
  private failure: string | undefined;
  private finished = false;
  private exitCode: number | null = null;
  private exited = false;
  private readonly seqRules = new SeqRules();
  /** Called once `closed` (or a failure) has been delivered. */
  onFinished: (() => void) | undefined;
  /** A `closed` came before events below it, which are being read. */
  private fillingGap = false;
  /** The server answered its `process/start` (only then is there anything to catch up with after a resume). */
  started = false;

  constructor(
    readonly processId: string,
    readonly tty: boolean,
    private readonly backend: SessionBackend,
    /** Keep events until the first consumer attaches (false for clients that only poll `read()`). */
    bufferEvents = true,
  ) {
    super();
    if (!bufferEvents) this.backlog = undefined;
    // 'newListener' fires before the listener is added: the backlog is claimed now (a consumer
    // attached later in this tick must not take it) and replayed a microtask later, once it is there.
    this.on('newListener', (name: string) => {
      if (EVENT_NAMES.has(name)) this.attach(this.emitEvent, true);
    });
  }

  /** True once `closed` or `failed` has been delivered. */
  get done(): boolean {
    return this.finished;
  }

  // ---- events in ----

  /** Routes a notification's event; out-of-order events wait for their turn. */
  receive(event: Exclude<ProcessEvent, { type: 'failed' }>): void {
    if (this.finished) return;
    const fault = this.seqRules.fault(event, this.orderer);
    if (fault) {
      this.fail(`exec-server broke the seq rules of process ${this.processId}: ${fault}`);
      return;
    }
    this.orderer.push(event);
    // The last event came, and some before it have not: read them (the server keeps them), or fail.
    if (event.type === 'closed' && !this.finished && !this.fillingGap) {
      this.fillingGap = true;
      void this.catchUp('cannot read the missing output');
    }
  }

  /**
   * After the client resumed its session on a new connection, or when the
   * last event came before others: reads what this session missed (see
   * `catch-up.ts`), so that every event arrives once, in seq order; fails
   * the session (`failure`: how a failed read is introduced) if the server lost some.
   */
  async catchUp(failure = 'cannot catch up after reconnecting'): Promise<void> {
    if (this.finished) return;
    const read = (afterSeq: number) => this.backend.read(this.processId, { afterSeq });
    const orderer = this.orderer;
    const session = this;
    try {
      const lost = await catchUp(
        {
          get publishedThrough() {
            return orderer.publishedThrough;
          },
          has: (seq) => orderer.has(seq),
          get exitPublished() {
            return session.seqRules.exitArrived;
          },
          receive: (event) => this.receive(event),
        },
        read,
      );
      if (lost !== undefined) this.fail(lost);
    } catch (error) {
      if (!this.finished) this.fail(`${failure}: ${(error as Error).message}`);
    }
  }

  /** The transport is gone: one `failed` event, and reads synthesize a closed state. */
  fail(message: string): void {
    if (this.finished) return;
    this.failure = message;
    this.publish({ type: 'failed', message });
  }

  private publish(event: ProcessEvent): void {
    if (event.type === 'exited') {
      this.exited = true;
      this.exitCode = event.exitCode;
    }
    if (this.backlog) this.backlog.push(event);
    for (const consumer of this.consumers) {
      const replay = this.replays.get(consumer);
      if (replay) replay.push(event);
      else consumer(event);
    }
    for (const watcher of this.watchers) watcher(event);
    if (event.type === 'closed' || event.type === 'failed') {
      this.finished = true;
      this.onFinished?.();
    }
  }

  /**
   * Adds `consumer`, handing it the backlog, at once or (`replayLater`) a
   * microtask later; events published meanwhile wait behind the backlog.
   */
  private attach(consumer: Consumer, replayLater = false): void {
    if (this.consumers.has(consumer)) return;
    this.consumers.add(consumer);
    const backlog = this.backlog ?? [];
    this.backlog = undefined;
    if (!replayLater || backlog.length === 0) {
      backlog.forEach(consumer);
      return;
    }
    this.replays.set(consumer, backlog);
    queueMicrotask(() => {
      const replay = this.replays.get(consumer)!;
      this.replays.delete(consumer);
      replay.forEach(consumer);
    });
  }

  private readonly emitEvent: Consumer = (event) => {
    this.emit('event', event);
    this.emit(event.type, event);
  };

  // ---- events out ----

  /** Events in seq order; ends after `closed` or `failed`. */
  [Symbol.asyncIterator](): AsyncIterator<ProcessEvent> {
    const loop = loopQueue(() => this.backend.hold());
    const consumer: Consumer = (event) => {
      loop.consumer(event);
      if (event.type === 'closed' || event.type === 'failed') this.consumers.delete(consumer);
    };
    const replaysBacklog = this.backlog !== undefined;
    this.attach(consumer);
    if (this.finished && !replaysBacklog) loop.end();
    // A loop left early (break, return, throw) stops taking events: nothing piles up for it.
    const stop = async (): Promise<IteratorResult<ProcessEvent>> => {
      this.consumers.delete(consumer);
      loop.end();
      return { value: undefined, done: true };
    };
    return { next: () => loop.next(), return: stop };
  }

  private streams: OutputStreams | undefined;

  /** Output of stream "stdout" (or "pty") as a Node stream. */
  get stdout(): Readable {
    return this.stream('stdout');
  }

  /** Output of stream "stderr" as a Node stream (empty under a PTY). */
  get stderr(): Readable {
    return this.stream('stderr');
  }

  private stream(name: 'stdout' | 'stderr'): Readable {
    if (!this.streams) {
      const { streams, consumer } = outputStreams(() => this.backend.hold());
      this.streams = streams;
      const replaysBacklog = this.backlog !== undefined;
      this.attach(consumer); // finished, and another consumer took the events: nothing more comes to them
      if (this.finished && !replaysBacklog) for (const stream of Object.values(streams)) stream.end();
    }
    return this.streams[name];
  }

  // ---- calls ----

  async read(options: ReadOptions = {}): Promise<ReadResult> {
    if (this.failure !== undefined) return this.synthesizedRead();
    try {
      return await this.backend.read(this.processId, options);
    } catch (error) {
      if (this.failure !== undefined) return this.synthesizedRead();
      throw error;
    }
  }

  private synthesizedRead(): ReadResult {
    return {
      chunks: [],
      nextSeq: this.orderer.publishedThrough + 1,
      exited: true,
      exitCode: this.exitCode,
      closed: true,
      failure: this.failure ?? null,
    };
  }

  write(bytes: Uint8Array | string): Promise<WriteStatus> {
    return this.backend.write(this.processId, typeof bytes === 'string' ? Buffer.from(bytes) : bytes, false);
  }

  /** Closes a `pipeStdin` process's stdin (EXT-CLOSESTDIN), after writing `bytes` if given. */
  closeStdin(bytes: Uint8Array | string = ''): Promise<WriteStatus> {
    return this.backend.write(this.processId, typeof bytes === 'string' ? Buffer.from(bytes) : bytes, true);
  }

  resize(rows: number, cols: number): Promise<void> {
    return this.backend.resize(this.processId, rows, cols);
  }

  signal(signal: string): Promise<void> {
    return this.backend.signal(this.processId, signal);
  }

  /** SIGKILLs the process group; resolves true if it was still running. */
  terminate(): Promise<boolean> {
    return this.backend.terminate(this.processId);
  }

  /** Resolves with the exit code once `closed` arrives (rejects on failure). */
  wait(): Promise<number | null> {
    return new Promise((resolve, reject) => {
      const check = (event: ProcessEvent) => {
        if (event.type === 'closed') resolve(this.exitCode);
        else if (event.type === 'failed') reject(ClientErrors.cutOff(event.message));
        else return;
        this.watchers.delete(check);
      };
      if (this.finished) return this.failure !== undefined ? reject(ClientErrors.cutOff(this.failure)) : resolve(this.exitCode);
      this.watchers.add(check);
    });
  }

  get exitStatus(): { exited: boolean; exitCode: number | null } {
    return { exited: this.exited, exitCode: this.exitCode };
  }
}
