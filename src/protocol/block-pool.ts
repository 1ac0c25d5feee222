/**
 * Whole blocks (`MAX_BLOCK_BYTES`) given back once nothing holds them and
 * handed out again, so that a stream of block reads or writes reuses a few
 * buffers: fresh ones, alive while their I/O is on its way, outlive young
 * collections and are freed only at a full one, which V8 starts after some
 * 64 MiB of them (the bench's `blocks` workload shows the server's RSS growth).
 */
import { MAX_BLOCK_BYTES } from './defaults.js';

/** Enough for the blocks a client keeps in flight (the library's streams keep four). */
const SPARE_BLOCKS = 8;

export class BlockPool {
  private readonly spare: Buffer[] = [];

  /** A whole block: a spare one, or a new one. */
  take(): Buffer {
    return this.spare.pop() ?? Buffer.allocUnsafeSlow(MAX_BLOCK_BYTES);
  }

  /** `block` is free again (nothing reads or writes it any more); kept if it is a whole block and room is left. */
  giveBack(block: Buffer): void {
    if (block.length === MAX_BLOCK_BYTES && this.spare.length < SPARE_BLOCKS) this.spare.push(block);
  }
}
