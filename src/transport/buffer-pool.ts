/**
 * Reusable buffers for lines in flight: in a micro-benchmark, allocating a
 * fresh 87 KB buffer per output line cost as much as encoding the line. A
 * line larger than a slab gets its own buffer, and at most `maxFree` slabs
 * are kept.
 */
export class BufferPool {
  private readonly free: Buffer[] = [];

  constructor(
    private readonly slabBytes = 128 * 1024,
    private readonly maxFree = 32,
  ) {}

  /** A buffer of exactly `bytes` bytes, its contents undefined. */
  take = (bytes: number): Buffer => {
    if (bytes > this.slabBytes) return Buffer.allocUnsafe(bytes);
    return (this.free.pop() ?? Buffer.allocUnsafeSlow(this.slabBytes)).subarray(0, bytes);
  };

  /** Returns a buffer from `take` once nothing reads it any more. */
  give(buffer: Buffer): void {
    const slab = buffer.buffer;
    if (slab.byteLength !== this.slabBytes || buffer.byteOffset !== 0 || this.free.length >= this.maxFree) return;
    this.free.push(Buffer.from(slab));
  }
}
