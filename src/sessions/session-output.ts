/**
 * The output a command session has produced since its last `exec` call:
 * at most `limit` bytes, oldest bytes dropped first (trimming a chunk if needed).
 */
export class SessionOutput {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private waiters: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    let excess = this.bytes - this.limit;
    while (excess > 0 && this.chunks.length > 0) {
      const front = this.chunks[0]!;
      if (front.length <= excess) {
        this.chunks.shift();
        this.bytes -= front.length;
        excess -= front.length;
      } else {
        this.chunks[0] = front.subarray(excess);
        this.bytes -= excess;
        excess = 0;
      }
    }
    this.wake();
  }

  /** Takes everything collected so far. */
  drain(): Buffer {
    const all = Buffer.concat(this.chunks, this.bytes);
    this.chunks = [];
    this.bytes = 0;
    return all;
  }

  /** Puts bytes back in front (an incomplete UTF-8 sequence kept for the next call). */
  unshift(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.chunks.unshift(bytes);
    this.bytes += bytes.length;
  }

  /** Resolves on the next push or wake, or after `ms`. */
  waitForChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter !== done);
        resolve();
      }, ms);
      this.waiters.push(done);
    });
  }

  wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
}
