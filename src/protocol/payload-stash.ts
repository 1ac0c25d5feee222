/**
 * Base64 params that were decoded before their request was parsed (see
 * `transport/large-line.ts`), kept per connection. The decoded bytes wait
 * here under a token that takes the string's place in the params; the
 * handler's `decodeBase64` hands them over when it meets the token. A token
 * starts with NUL and carries a random secret, so no client can forge one.
 */
import { randomHex } from './random-ids.js';
import { decodeBase64, type Base64Result } from './base64.js';
import { BlockPool } from './block-pool.js';
import { MAX_BLOCK_BYTES } from './defaults.js';

export class PayloadStash {
  /** Made at the first stash: a session that never stashes reads no random bytes for it. */
  private secretText: string | undefined;
  private readonly payloads = new Map<string, Buffer>();
  private next = 0;
  /** Blocks to decode into, back from methods done with them (`giveBack`): see `block-pool.ts`. */
  private readonly blocks = new BlockPool();
  private readonly lent = new WeakSet<ArrayBufferLike>();

  /** A buffer of `size` bytes to decode a payload into: a lent block when it fits in one. */
  lend(size: number): Buffer {
    if (size > MAX_BLOCK_BYTES) return Buffer.allocUnsafe(size);
    const block = this.blocks.take();
    this.lent.add(block.buffer);
    return block.subarray(0, size);
  }

  /** The method is done with `bytes` (nothing holds them any more): a lent block can take the next payload. */
  giveBack(bytes: Buffer): void {
    if (this.lent.delete(bytes.buffer)) this.blocks.giveBack(Buffer.from(bytes.buffer, 0, MAX_BLOCK_BYTES));
  }

  /** Keeps `bytes` (valid, already decoded base64) and returns the token that stands for them. */
  stash(bytes: Buffer): string {
    this.secretText ??= `\u0000decoded-payload:${randomHex(16)}:`;
    const token = `${this.secretText}${this.next++}`;
    this.payloads.set(token, bytes);
    return token;
  }

  /** The bytes of a token (once), or the base64 `text` decoded. */
  decodeBase64(text: string): Base64Result {
    const claimed = this.claim(text);
    return claimed ? { ok: true, bytes: claimed } : decodeBase64(text);
  }

  /** Drops the bytes of any token among `params`' values that no method claimed. */
  release(params: unknown): void {
    if (this.payloads.size === 0 || params === null || typeof params !== 'object') return;
    for (const value of Object.values(params)) {
      if (typeof value !== 'string' || !value.startsWith(this.secretText!)) continue;
      const bytes = this.payloads.get(value);
      this.payloads.delete(value);
      if (bytes) this.giveBack(bytes);
    }
  }

  /** How many payloads wait for their method (tests check none is left behind). */
  get size(): number {
    return this.payloads.size;
  }

  private claim(text: string): Buffer | undefined {
    if (this.secretText === undefined || text.charCodeAt(0) !== 0 || !text.startsWith(this.secretText)) return undefined;
    const bytes = this.payloads.get(text);
    this.payloads.delete(text);
    return bytes;
  }
}
