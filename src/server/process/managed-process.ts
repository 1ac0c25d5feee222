/**
 * One process as the protocol sees it: a seq counter shared by output, exit
 * and close (§3.3), the retained output, and the long-polls waiting on it.
 */
import type { OutputStream, ProcessReadResult } from '../../protocol/types.js';
import type { Child, ChildEvents } from './child.js';
import { deferred } from '../deferred.js';
import { OutputLog } from './output-log.js';

/** Where a process's events go, in seq order (the connection's notifications). */
export interface ProcessEventSink {
  output(processId: string, seq: number, stream: OutputStream, bytes: Buffer): void;
  exited(processId: string, seq: number, exitCode: number): void;
  closed(processId: string, seq: number): void;
}

export interface ReadOptions {
  afterSeq: number;
  maxBytes: number | undefined;
  waitMs: number;
  /** True once waits must end at once (shutdown signals); checked on every wake. */
  stopWaiting?: () => boolean;
}

/** setTimeout's limit; longer waits are re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class ManagedProcess implements ChildEvents {
  child: Child | undefined;
  private nextSeq = 1;
  private readonly log = new OutputLog();
  private waiters = new Set<() => void>();
  exitCode: number | null = null;
  exited = false;
  closed = false;
  /** Killed by `process/terminate`: later writes fail (§3.5). */
  terminated = false;
  stdinClosed = false;
  onClosed: (() => void) | undefined;
  private readonly exitedSignal = deferred();
  private readonly closedSignal = deferred();
  /** Resolves once `exited` was emitted. */
  readonly whenExited = this.exitedSignal.promise;
  /** Resolves once `closed` was emitted. */
  readonly whenClosed = this.closedSignal.promise;

  constructor(
    readonly id: string,
    readonly tty: boolean,
    readonly pipeStdin: boolean,
    private readonly sink: ProcessEventSink,
  ) {}

  get starting(): boolean {
    return this.child === undefined;
  }

  output(stream: OutputStream, bytes: Buffer): void {
    const seq = this.nextSeq++;
    this.log.append(seq, stream, bytes);
    this.sink.output(this.id, seq, stream, bytes);
    this.wake();
  }

  exit(exitCode: number): void {
    if (this.exited) return;
    const seq = this.nextSeq++;
    this.exited = true;
    this.exitCode = exitCode;
    this.sink.exited(this.id, seq, exitCode);
    this.wake();
    this.exitedSignal.resolve();
  }

  close(): void {
    if (this.closed) return;
    const seq = this.nextSeq++;
    this.closed = true;
    this.sink.closed(this.id, seq);
    this.wake();
    this.closedSignal.resolve();
    this.onClosed?.();
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
    return {
      chunks,
      nextSeq: last ? last.seq + 1 : this.nextSeq,
      exited: this.exited,
      exitCode: this.exitCode,
      closed: this.closed,
      failure: null,
    };
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
