/**
 * Writes queued buffers, in order, to a non-blocking descriptor (a PTY's
 * master): one write in flight at a time, retried while the terminal is full
 * (EAGAIN), dropped once the terminal is gone.
 */
import fs from 'node:fs';

/** How long to wait before retrying a write the full terminal refused. */
const FULL_RETRY_MS = 5;

export class FdWriter {
  private queue: Buffer[] = [];
  private writing = false;
  private stopped = false;

  constructor(private readonly fd: number) {}

  write(bytes: Buffer): void {
    if (this.stopped || bytes.length === 0) return;
    this.queue.push(bytes);
    this.flush();
  }

  /** Drops what is queued and writes nothing more (the descriptor is about to close). */
  stop(): void {
    this.stopped = true;
    this.queue = [];
  }

  private flush(): void {
    if (this.writing || this.stopped) return;
    const next = this.queue[0];
    if (!next) return;
    this.writing = true;
    fs.write(this.fd, next, (error, written) => {
      this.writing = false;
      if (this.stopped) return;
      if (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') setTimeout(() => this.flush(), FULL_RETRY_MS);
        else this.queue = []; // the terminal is gone
        return;
      }
      if (written < next.length) this.queue[0] = next.subarray(written);
      else this.queue.shift();
      this.flush();
    });
  }
}
