/**
 * The output a process keeps for `process/read` (§3.3, §3.4): whole chunks,
 * at most 1 MiB in total, oldest chunks evicted first.
 *
 * The bytes are copied in, packed back to back into slabs, so the reader's
 * buffer is reused at once and a short read pins no more memory than it
 * holds. A log that holds little has small slabs of its own; past that it
 * takes slabs of the runtime's output pool and gives each back once no
 * retained chunk lies in it, so a flood allocates nothing. (Reads kept as
 * buffers of their own lived long enough to be promoted, and only a full
 * collection freed them: npm run bench -- --only stalled, the peak while
 * flowing.)
 */
import type { OutputStream, ProcessOutputChunk } from '../../protocol/types.js';
import type { BufferPool } from '../../transport/buffer-pool.js';

export const RETAINED_OUTPUT_BYTES = 1024 * 1024;
/** The slab size when no pool is given. */
const DEFAULT_SLAB_BYTES = 64 * 1024;
/** The smallest slab of a log's own; each is sized to hold all the log keeps, doubled up to a pool slab. */
const MIN_SLAB_BYTES = 64;

interface Chunk {
  seq: number;
  stream: OutputStream;
  /** Where its bytes begin in the log's byte sequence. */
  start: number;
  length: number;
}

interface Slab {
  bytes: Buffer;
  /** Where `bytes[0]` is in the log's byte sequence. */
  start: number;
  /** Taken from the pool (else the log's own). */
  pooled: boolean;
}

export class OutputLog {
  private chunks: Chunk[] = [];
  private head = 0;
  private slabs: Slab[] = [];
  /** Offsets in the log's byte sequence: of the oldest retained byte, and just past the newest. */
  private start = 0;
  private end = 0;

  constructor(
    private readonly limit = RETAINED_OUTPUT_BYTES,
    private readonly pool?: BufferPool,
  ) {}

  /** Every byte retained, as text (for looking for words in it). */
  text(): string {
    return this.bytesBetween(this.start, this.end).toString('utf8');
  }

  /** The memory its slabs take: what it keeps, and room. */
  get pinnedBytes(): number {
    return this.slabs.reduce((sum, slab) => sum + slab.bytes.length, 0);
  }

  /** The seq of the newest chunk retained, or 0. */
  get lastSeq(): number {
    return this.chunks.length > this.head ? this.chunks[this.chunks.length - 1]!.seq : 0;
  }

  /** Keeps a copy of `bytes` (which the caller may reuse at once). */
  append(seq: number, stream: OutputStream, bytes: Buffer): void {
    this.chunks.push({ seq, stream, start: this.end, length: bytes.length });
    for (let offset = 0; offset < bytes.length; ) {
      const tail = this.slabWithRoom(bytes.length - offset);
      const copied = bytes.copy(tail.bytes, this.end - tail.start, offset);
      offset += copied;
      this.end += copied;
    }
    this.evict();
  }

  /**
   * No more output will come (the process closed): if its slabs could hold a
   * quarter more than it keeps, what it keeps is copied into one buffer of
   * its exact size and the pool's slabs go back, so a retained process pins
   * about what it printed.
   */
  compact(): void {
    const kept = this.end - this.start;
    if (this.pinnedBytes <= kept + kept / 4) return;
    const packed = Buffer.concat(this.partsBetween(this.start, this.end), kept);
    for (const slab of this.slabs) if (slab.pooled) this.pool?.give(slab.bytes);
    this.slabs = kept > 0 ? [{ bytes: packed, start: this.start, pooled: false }] : [];
  }

  /** Gives every slab back and forgets everything (the process is dropped from the table). */
  release(): void {
    for (const slab of this.slabs) if (slab.pooled) this.pool?.give(slab.bytes);
    this.slabs = [];
    this.chunks = [];
    this.head = 0;
    this.start = this.end;
  }

  /**
   * Chunks with `seq > afterSeq`: the first always, then while the total
   * stays within `maxBytes` (chunks are never split).
   */
  select(afterSeq: number, maxBytes: number | undefined): ProcessOutputChunk[] {
    const selected: ProcessOutputChunk[] = [];
    let total = 0;
    for (let i = this.firstAfter(afterSeq); i < this.chunks.length; i++) {
      const chunk = this.chunks[i]!;
      if (maxBytes !== undefined && selected.length > 0 && (total >= maxBytes || total + chunk.length > maxBytes)) break;
      const bytes = this.bytesBetween(chunk.start, chunk.start + chunk.length);
      selected.push({ seq: chunk.seq, stream: chunk.stream, chunk: bytes.toString('base64') });
      total += chunk.length;
    }
    return selected;
  }

  /** The oldest chunks go while more than `limit` is kept (the newest stays), then the slabs they alone used. */
  private evict(): void {
    while (this.end - this.start > this.limit && this.head < this.chunks.length - 1) {
      this.chunks[this.head] = undefined as unknown as Chunk;
      this.head++;
      this.start = this.chunks[this.head]!.start;
    }
    while (this.slabs.length > 0 && this.slabs[0]!.start + this.slabs[0]!.bytes.length <= this.start) {
      const slab = this.slabs.shift()!; // not inside `pool?.give(…)`: without a pool that would never run
      if (slab.pooled) this.pool?.give(slab.bytes);
    }
    if (this.head > 1024 && this.head * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
  }

  /** The newest slab if it has room, else a new one. */
  private slabWithRoom(needed: number): Slab {
    const tail = this.slabs[this.slabs.length - 1];
    if (tail && this.end < tail.start + tail.bytes.length) return tail;
    const slab = this.newSlab(needed);
    this.slabs.push(slab);
    return slab;
  }

  /**
   * One of its own while the log holds less than a pool slab (room for all it
   * holds and `needed`, a power of two: it pins at most about twice what it
   * keeps), else the pool's.
   */
  private newSlab(needed: number): Slab {
    const poolSlab = this.pool?.slabBytes ?? DEFAULT_SLAB_BYTES;
    let size = MIN_SLAB_BYTES;
    while (size < this.end - this.start + needed && size < poolSlab) size *= 2;
    const pooled = size >= poolSlab && this.pool !== undefined;
    const bytes = pooled ? this.pool!.take(poolSlab) : Buffer.allocUnsafeSlow(Math.min(size, poolSlab));
    return { bytes, start: this.end, pooled };
  }

  /** The bytes from `from` to `to` of the log's byte sequence: a view if one slab holds them, else a copy. */
  private bytesBetween(from: number, to: number): Buffer {
    const parts = this.partsBetween(from, to);
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }

  /** Views of the slabs holding the bytes from `from` to `to`, in order. */
  private partsBetween(from: number, to: number): Buffer[] {
    const parts: Buffer[] = [];
    for (let i = this.slabHolding(from); i < this.slabs.length && from < to; i++) {
      const slab = this.slabs[i]!;
      const until = Math.min(to, slab.start + slab.bytes.length);
      parts.push(slab.bytes.subarray(from - slab.start, until - slab.start));
      from = until;
    }
    return parts;
  }

  /** The index of the slab holding byte `offset` (binary search: slabs are in order). */
  private slabHolding(offset: number): number {
    let low = 0;
    let high = this.slabs.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >>> 1;
      if (this.slabs[mid]!.start <= offset) low = mid;
      else high = mid - 1;
    }
    return low;
  }

  private firstAfter(afterSeq: number): number {
    let low = this.head;
    let high = this.chunks.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.chunks[mid]!.seq <= afterSeq) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}
