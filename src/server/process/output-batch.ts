/**
 * Joins a PTY's small reads into larger `output` events. A terminal hands
 * over at most 4095 bytes per read; reads of the same event-loop turn are
 * joined up to `COALESCE_BYTES`, so a flood is not one notification per 4 KiB,
 * while a lone echo still leaves at once.
 */
import { OUTPUT_SLAB_BYTES } from './output-pipe.js';

/** As much as one read of a pipe returns (`OUTPUT_SLAB_BYTES`). */
const COALESCE_BYTES = OUTPUT_SLAB_BYTES;
/** How long a streaming batch may wait to fill (see `scheduleFlush`). */
const STREAM_FLUSH_MS = 2;

export class OutputBatch {
  /** Made on first output, dropped at `end` (a retained closed PTY holds none). */
  private batch: Buffer | undefined;
  private batchBytes = 0;
  private flushScheduled: { cancel(): void } | undefined;
  private lastFlushAt = 0;

  /** `deliver` is lent each batch for the call: the batch's memory is reused after it. */
  constructor(private readonly deliver: (bytes: Buffer) => void) {}

  /** Copies `bytes` (which may be a view of a shared read buffer) into the batch. */
  add(bytes: Buffer): void {
    for (let offset = 0; offset < bytes.length; ) {
      this.batch ??= Buffer.allocUnsafeSlow(COALESCE_BYTES);
      const copied = bytes.copy(this.batch, this.batchBytes, offset);
      this.batchBytes += copied;
      offset += copied;
      if (this.batchBytes === COALESCE_BYTES) this.flush();
    }
    if (this.batchBytes > 0) this.flushScheduled ??= this.scheduleFlush();
  }

  /** Delivers what the batch holds now. */
  flush(): void {
    this.flushScheduled?.cancel();
    this.flushScheduled = undefined;
    this.lastFlushAt = performance.now();
    if (this.batchBytes === 0 || !this.batch) return;
    const bytes = this.batch.subarray(0, this.batchBytes);
    this.batchBytes = 0;
    this.deliver(bytes);
  }

  /** Delivers what the batch holds, and lets its memory go: no more output comes. */
  end(): void {
    this.flush();
    this.batch = undefined;
  }

  /**
   * After a quiet spell output leaves at the end of this loop turn (an echo
   * is not delayed). While output streams, a terminal still hands over one
   * 4 KiB read per turn, so flushing every turn would mean a notification
   * per 4 KiB; then the batch waits up to `STREAM_FLUSH_MS` to fill.
   */
  private scheduleFlush(): { cancel(): void } {
    if (performance.now() - this.lastFlushAt > STREAM_FLUSH_MS) {
      const immediate = setImmediate(() => this.flush());
      return { cancel: () => clearImmediate(immediate) };
    }
    const timer = setTimeout(() => this.flush(), STREAM_FLUSH_MS);
    return { cancel: () => clearTimeout(timer) };
  }
}
