/**
 * One process as the protocol sees it: a seq counter shared by output, exit
 * and close (§3.3), the retained output, and the long-polls waiting on it.
 */
import type { OutputStream, ProcessReadResult } from '../../protocol/types.js';
import type { Generation } from '../client-generation.js';
import type { Child, ChildEvents, ExitStatus } from './child.js';
import { deferred } from '../deferred.js';
import type { BufferPool } from '../../transport/buffer-pool.js';
import { OutputLog, RETAINED_OUTPUT_BYTES } from './output-log.js';
import { likelySandboxDenied } from '../sandbox/denial.js';

/** Where a process's events go, in seq order (the connection's notifications). */
export interface ProcessEventSink {
  /** `bytes` are lent for the call only: their memory is reused at once (the retained copy is the log's). */
  output(processId: string, seq: number, stream: OutputStream, bytes: Buffer): void;
  exited(processId: string, seq: number, exitCode: number, sandboxDenied: boolean): void;
  closed(processId: string, seq: number): void;
  /** The client's protocol generation, which shapes exit codes and read results. */
  generation(): Generation;
}

export interface ReadOptions {
  afterSeq: number;
  maxBytes: number | undefined;
  waitMs: number;
  /** True once waits must end at once (shutdown signals); checked on every wake. */
  stopWaiting?: () => boolean;
}

/** How long a confined failure's exit waits for the rest of its output (see `ManagedProcess.exit`). */
const DENIAL_OUTPUT_WAIT_MS = 250;

/** setTimeout's limit; longer waits are re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class ManagedProcess implements ChildEvents {
  child: Child | undefined;
  private nextSeq = 1;
  private readonly log: OutputLog;
  private waiters = new Set<() => void>();
  exitCode: number | null = null;
  exited = false;
  closed = false;
  /** Killed by `process/terminate`: later writes fail (§3.5). */
  terminated = false;
  stdinClosed = false;
  /** Runs under a sandbox: its failures may be the sandbox's doing (`sandboxDenied`). */
  sandboxed = false;
  sandboxDenied = false;
  /** A confined failure's exit, held until its pipes close (see `exit`). */
  private heldExit: { exitCode: number; timer: NodeJS.Timeout } | undefined;
  /** `writeId`s already applied: a repeated one is answered `accepted` and not written again. */
  readonly writeIds = new Set<string>();
  onClosed: (() => void) | undefined;
  private readonly startedSignal = deferred();
  /** Resolves once the start has succeeded or failed. */
  readonly whenStarted = this.startedSignal.promise;
  private readonly exitedSignal = deferred();
  private readonly closedSignal = deferred();
  /** Notices held until the start's answer is out (see `settleStart`); undefined from then on. */
  private held: Array<() => void> | undefined = [];
  /** Resolves once `exited` was emitted. */
  readonly whenExited = this.exitedSignal.promise;
  /** Resolves once `closed` was emitted. */
  readonly whenClosed = this.closedSignal.promise;

  constructor(
    readonly id: string,
    readonly tty: boolean,
    readonly pipeStdin: boolean,
    private readonly sink: ProcessEventSink,
    outputSlabs?: BufferPool,
  ) {
    this.log = new OutputLog(RETAINED_OUTPUT_BYTES, outputSlabs);
  }

  get starting(): boolean {
    return this.child === undefined;
  }

  /** The start is over: `child` is set, or the process was dropped from the table. */
  settleStart(): void {
    this.startedSignal.resolve();
    // The start's answer is written in the microtasks after its handler returns; what the process
    // told meanwhile (a fast child's exit can come in with its start, through the spawner) follows.
    setImmediate(() => {
      const held = this.held;
      this.held = undefined;
      for (const notice of held ?? []) notice();
    });
  }

  /** Tells the sink, after the start's answer (§3.3: servers SHOULD answer first). */
  private tell(notice: () => void): void {
    if (this.held) this.held.push(notice);
    else notice();
  }

  /** Dropped from the table: the retained output's memory goes back to the pool. */
  forget(): void {
    this.log.release();
  }

  output(stream: OutputStream, bytes: Buffer): void {
    const seq = this.nextSeq++;
    this.log.append(seq, stream, bytes);
    if (this.held) {
      // Lent bytes: a notice told later needs its own copy.
      const copy = Buffer.from(bytes);
      this.held.push(() => this.sink.output(this.id, seq, stream, copy));
    } else {
      this.sink.output(this.id, seq, stream, bytes); // the hot path: no closure per chunk
    }
    this.wake();
  }

  exit(status: ExitStatus): void {
    if (this.exited || this.heldExit) return;
    const exitCode = this.protocolExitCode(status);
    // A confined failure is told from its output, and a pipe may still hold
    // the last of it (the words that say "denied"): the exit is reported once
    // the pipes are closed, or after DENIAL_OUTPUT_WAIT_MS.
    if (this.sandboxed && exitCode !== 0 && !this.closed) {
      this.heldExit = { exitCode, timer: setTimeout(() => this.reportExit(exitCode), DENIAL_OUTPUT_WAIT_MS) };
      return;
    }
    this.reportExit(exitCode);
  }

  private reportExit(exitCode: number): void {
    clearTimeout(this.heldExit?.timer);
    this.heldExit = undefined;
    const seq = this.nextSeq++;
    this.exited = true;
    this.exitCode = exitCode;
    // Only a confined failure is worth reading the retained output for.
    this.sandboxDenied = this.sandboxed && exitCode !== 0 && likelySandboxDenied(exitCode, this.log.text());
    const sandboxDenied = this.sandboxDenied;
    this.tell(() => this.sink.exited(this.id, seq, exitCode, sandboxDenied));
    this.wake();
    this.exitedSignal.resolve();
  }

  close(): void {
    if (this.closed) return;
    if (this.heldExit) this.reportExit(this.heldExit.exitCode);
    const seq = this.nextSeq++;
    this.closed = true;
    this.log.compact(); // nothing more will be appended
    this.tell(() => this.sink.closed(this.id, seq));
    this.wake();
    this.closedSignal.resolve();
    this.onClosed?.();
  }

  /**
   * A signal death reads as 1 on a PTY (both generations, as the reference's
   * PTY layer reports it), and on pipes as 128+signal in generation 2 (137
   * after `process/terminate`) and −1 in generation 1 (§3.7).
   */
  private protocolExitCode(status: ExitStatus): number {
    if (status.code !== undefined) return status.code;
    if (this.tty) return 1;
    return this.sink.generation() === 2 ? 128 + status.signal : -1;
  }

  /** `process/read` (§3.4): answers at once when there is something to say, else waits. */
  async read(options: ReadOptions): Promise<ProcessReadResult> {
    const deadline = Date.now() + options.waitMs;
    for (;;) {
      const result = this.snapshot(options.afterSeq, options.maxBytes);
      const remaining = deadline - Date.now();
      if (this.isReady(result, options.afterSeq) || remaining <= 0 || options.stopWaiting?.()) return result;
      await this.waitForEvent(Math.min(remaining, MAX_TIMER_MS));
    }
  }

  private isReady(result: ProcessReadResult, afterSeq: number): boolean {
    return result.chunks.length > 0 || this.closed || (this.exited && afterSeq < this.nextSeq - 1);
  }

  private snapshot(afterSeq: number, maxBytes: number | undefined): ProcessReadResult {
    const chunks = this.log.select(afterSeq, maxBytes);
    const last = chunks[chunks.length - 1];
    const result = {
      chunks,
      nextSeq: last ? last.seq + 1 : this.nextSeq,
      exited: this.exited,
      exitCode: this.exitCode,
      closed: this.closed,
      failure: null,
    };
    if (this.sink.generation() === 1) return result;
    // Generation 2 counts exit and close too, unless the read had a maxBytes and returned
    // chunks: then, as the reference, it goes on from the last chunk (cut short or not).
    const paged = last !== undefined && maxBytes !== undefined;
    return { ...result, nextSeq: paged ? last.seq + 1 : this.nextSeq, sandboxDenied: this.sandboxDenied };
  }

  private waitForEvent(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.add(done);
    });
  }

  /** Wakes pending long-polls so they re-evaluate (and see `stopWaiting`). */
  wake(): void {
    if (this.waiters.size === 0) return;
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const waiter of waiters) waiter();
  }
}
