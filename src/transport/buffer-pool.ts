/**
 * Reusable buffers: for lines in flight (in a micro-benchmark, allocating a
 * fresh 87 KB buffer per output line cost as much as encoding the line), and
 * for children's output (`server/process/output-pipe.ts`). A request larger
 * than a slab gets its own buffer, and at most `maxFree` slabs are kept.
 */
export class BufferPool {
  private readonly free: Buffer[] = [];
  /** The slabs this pool made: only those are taken back. */
  private readonly own = new WeakSet<ArrayBufferLike>();

  constructor(
    readonly slabBytes = 128 * 1024,
    private readonly maxFree = 32,
  ) {}

  /** A buffer of exactly `bytes` bytes, its contents undefined. */
  take = (bytes: number): Buffer => {
    if (bytes > this.slabBytes) return Buffer.allocUnsafe(bytes);
    return (this.free.pop() ?? this.newSlab()).subarray(0, bytes);
  };

  /**
   * Returns a buffer from `take` once nothing reads it any more; its holder
   * gives it back once. A foreign buffer, or a slab that is free already, is
   * ignored. (A slab given back again after another `take` cannot be told
   * from a rightful return: holders must not do that.)
   */
  give(buffer: Buffer): void {
    const slab = buffer.buffer;
    if (!this.own.has(slab) || buffer.byteOffset !== 0 || this.free.length >= this.maxFree) return;
    if (this.free.some((free) => free.buffer === slab)) return;
    this.free.push(Buffer.from(slab));
  }

  private newSlab(): Buffer {
    const slab = Buffer.allocUnsafeSlow(this.slabBytes);
    this.own.add(slab.buffer);
    return slab;
  }
}
