/**
 * Collects a byte stream of any length in bounded memory: the first and the
 * last `maxBytes / 2` bytes, and how many were dropped in between. The text
 * comes out with the middle cut (and marked), never splitting a character.
 */
import { completePrefixLength } from './utf8.js';

const MARKER_RESERVE = 64;
/** Each half must hold a whole 4-byte character. */
export const MIN_HEAD_TAIL_BYTES = MARKER_RESERVE + 2 * 4;

export class HeadTail {
  private readonly half: number;
  private head = Buffer.alloc(0);
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private total = 0;

  constructor(private readonly maxBytes: number) {
    if (!(maxBytes >= MIN_HEAD_TAIL_BYTES)) throw new RangeError(`HeadTail needs at least ${MIN_HEAD_TAIL_BYTES} bytes, got ${maxBytes}`);
    this.half = Math.floor((maxBytes - MARKER_RESERVE) / 2);
  }

  get length(): number {
    return this.total;
  }

  push(bytes: Buffer): void {
    this.total += bytes.length;
    if (this.head.length < this.half) {
      const room = this.half - this.head.length;
      this.head = Buffer.concat([this.head, bytes.subarray(0, room)]);
      bytes = bytes.subarray(room);
    }
    if (bytes.length === 0) return;
    this.tail.push(bytes);
    this.tailBytes += bytes.length;
    // Everything is kept while it all fits in `maxBytes` (then `text` cuts nothing); past that, the
    // chunks that still hold the last `half` bytes.
    if (this.total <= this.maxBytes) return;
    while (this.tailBytes - (this.tail[0]?.length ?? 0) >= this.half) this.tailBytes -= this.tail.shift()!.length;
  }

  /**
   * Bytes at the end that do not yet form a whole character (kept for
   * later). While nothing was dropped the head and tail are one run of bytes,
   * and a character may start in the head and end in the tail.
   */
  takeIncompleteEnd(): Buffer {
    const tail = Buffer.concat(this.tail, this.tailBytes);
    const contiguous = this.head.length + tail.length === this.total;
    const all = contiguous ? Buffer.concat([this.head, tail]) : tail;
    const cut = completePrefixLength(all);
    if (cut === all.length) return Buffer.alloc(0);
    const rest = Buffer.from(all.subarray(cut));
    const fromTail = Math.min(rest.length, tail.length);
    this.tail = fromTail < tail.length ? [tail.subarray(0, tail.length - fromTail)] : [];
    this.tailBytes = tail.length - fromTail;
    this.head = this.head.subarray(0, this.head.length - (rest.length - fromTail));
    this.total -= rest.length;
    return rest;
  }

  text(): string {
    const tail = Buffer.concat(this.tail, this.tailBytes);
    if (this.total <= this.maxBytes && this.head.length + tail.length === this.total) {
      return Buffer.concat([this.head, tail]).toString('utf8');
    }
    const head = this.head.subarray(0, completePrefixLength(this.head));
    let start = Math.max(0, tail.length - this.half);
    while (start < tail.length && (tail[start]! & 0xc0) === 0x80) start++;
    const kept = tail.subarray(start);
    const removed = this.total - head.length - kept.length;
    return `${head.toString('utf8')}\n…${removed} bytes truncated…\n${kept.toString('utf8')}`;
  }
}
