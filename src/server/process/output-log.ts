/**
 * The output a process keeps for `process/read` (§3.3, §3.4): whole chunks,
 * at most 1 MiB in total, oldest chunks evicted first. An evicted chunk goes
 * to `evicted` (the runtime's output pool takes its slab back): nothing else
 * holds a chunk once it has been sent.
 */
import type { OutputStream, ProcessOutputChunk } from '../../protocol/types.js';

export const RETAINED_OUTPUT_BYTES = 1024 * 1024;

interface Chunk {
  seq: number;
  stream: OutputStream;
  bytes: Buffer;
}

export class OutputLog {
  private chunks: Chunk[] = [];
  private head = 0;
  private bytes = 0;

  constructor(
    private readonly limit = RETAINED_OUTPUT_BYTES,
    private readonly evicted: (bytes: Buffer) => void = () => undefined,
  ) {}

  /** Every byte retained, as text (for looking for words in it). */
  text(): string {
    return Buffer.concat(this.chunks.slice(this.head).map((chunk) => chunk.bytes)).toString('utf8');
  }

  /** The seq of the newest chunk retained, or 0. */
  get lastSeq(): number {
    return this.chunks.length > this.head ? this.chunks[this.chunks.length - 1]!.seq : 0;
  }

  append(seq: number, stream: OutputStream, bytes: Buffer): void {
    this.chunks.push({ seq, stream, bytes });
    this.bytes += bytes.length;
    while (this.bytes > this.limit && this.head < this.chunks.length - 1) {
      const oldest = this.chunks[this.head]!.bytes;
      this.bytes -= oldest.length;
      this.chunks[this.head] = undefined as unknown as Chunk;
      this.evicted(oldest);
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
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
      if (maxBytes !== undefined && selected.length > 0 && (total >= maxBytes || total + chunk.bytes.length > maxBytes)) break;
      selected.push({ seq: chunk.seq, stream: chunk.stream, chunk: chunk.bytes.toString('base64') });
      total += chunk.bytes.length;
    }
    return selected;
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
