/**
 * Writes queued buffers, in order, to a non-blocking descriptor (a PTY's
 * master): what the descriptor takes at once is written at once, the rest
 * retried while the terminal is full (EAGAIN), dropped once the terminal is
 * gone or the writer stopped.
 *
 * The writes are synchronous on purpose. A write handed to libuv's thread
 * pool names the descriptor by number, and may run after the owner closed
 * it and the number went to another file: the terminal's input then landed
 * in that file (test/unit/server/process/fd-writer.test.ts shows it). On a
 * non-blocking descriptor a synchronous write never waits.
 */
import fs from 'node:fs';

/** How long to wait before retrying a write the full terminal refused. */
const FULL_RETRY_MS = 5;

export class FdWriter {
  private queue: Buffer[] = [];
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly fd: number) {}

  write(bytes: Buffer): void {
    if (this.stopped || bytes.length === 0) return;
    this.queue.push(bytes);
    if (!this.retry) this.flush();
  }

  /** Drops what is queued and writes nothing more (the descriptor is about to close). */
  stop(): void {
    this.stopped = true;
    this.queue = [];
    clearTimeout(this.retry);
    this.retry = undefined;
  }

  private flush(): void {
    this.retry = undefined;
    while (!this.stopped && this.queue.length > 0) {
      const next = this.queue[0]!;
      let written: number;
      try {
        written = fs.writeSync(this.fd, next);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') this.retry = setTimeout(() => this.flush(), FULL_RETRY_MS);
        else this.queue = []; // the terminal is gone
        return;
      }
      if (written < next.length) this.queue[0] = next.subarray(written);
      else this.queue.shift();
    }
  }
}
