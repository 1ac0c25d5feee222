/**
 * The end-of-output marker a PTY child's drain writes through the slave
 * (see `pty-child.ts`), and the search for it in the master's output: bytes
 * before the marker are output, bytes that could begin a split marker are
 * held until the next read says whether they do.
 */
import { randomHex } from '../../protocol/random-ids.js';

/**
 * A marker no program will print by chance: BEL, a random token, BEL. It
 * goes out through the terminal's output processing as the child left it,
 * so it holds only what no output flag changes: `olcuc` upper-cases
 * letters, the others touch only CR, NL, tab and other control characters.
 */
export function newDrainMarker(): Buffer {
  return Buffer.from(`\u0007EXEC-SERVER-DRAIN-${randomHex(12).toUpperCase()}\u0007`);
}

export class MarkerSearch {
  private held: Buffer = Buffer.alloc(0);

  constructor(readonly marker: Buffer) {}

  /** The output in `bytes` that is certainly not the marker, and whether the marker has come. */
  push(bytes: Buffer): { output: Buffer; found: boolean } {
    const tail = this.held.length === 0 ? bytes : Buffer.concat([this.held, bytes]);
    const at = tail.indexOf(this.marker);
    if (at >= 0) {
      this.held = Buffer.alloc(0);
      return { output: tail.subarray(0, at), found: true };
    }
    // Keep only what could be the start of a split marker.
    const keep = Math.min(tail.length, this.marker.length - 1);
    this.held = Buffer.from(tail.subarray(tail.length - keep));
    return { output: tail.subarray(0, tail.length - keep), found: false };
  }
}
