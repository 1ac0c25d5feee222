import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_BLOCK_BYTES } from '../../../src/protocol/defaults.js';
import { PayloadStash } from '../../../src/protocol/payload-stash.js';

describe('PayloadStash: blocks lent to decode into', () => {
  it('lends a buffer of the size asked, and the same block again once it is given back', () => {
    const stash = new PayloadStash();
    const first = stash.lend(1000);
    expect(first.length).toBe(1000);
    stash.giveBack(first);
    const second = stash.lend(MAX_BLOCK_BYTES);
    expect(second.length).toBe(MAX_BLOCK_BYTES);
    expect(second.buffer).toBe(first.buffer);
  });

  it('never lends one block twice at once, whatever is given back how often', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.nat(20), fc.integer({ min: 1, max: MAX_BLOCK_BYTES + 1 }))), (steps) => {
        const stash = new PayloadStash();
        const out: Buffer[] = [];
        for (const [lend, pick, size] of steps) {
          if (lend || out.length === 0) {
            const bytes = stash.lend(size);
            expect(bytes.length).toBe(size);
            expect(out.some((other) => other.buffer === bytes.buffer)).toBe(false);
            out.push(bytes);
          } else {
            // Given back, sometimes twice: a second give-back must not make it lendable twice.
            const bytes = out.splice(pick % out.length, 1)[0]!;
            stash.giveBack(bytes);
            if (pick % 3 === 0) stash.giveBack(bytes);
          }
        }
      }),
    );
  });

  it('takes back only what it lent, and keeps at most a few spare blocks', () => {
    const stash = new PayloadStash();
    const foreign = Buffer.allocUnsafeSlow(MAX_BLOCK_BYTES);
    stash.giveBack(foreign);
    expect(stash.lend(10).buffer).not.toBe(foreign.buffer);
    const lent = Array.from({ length: 12 }, () => stash.lend(MAX_BLOCK_BYTES));
    for (const bytes of lent) stash.giveBack(bytes);
    const again = new Set(Array.from({ length: 12 }, () => stash.lend(MAX_BLOCK_BYTES).buffer));
    expect(lent.filter((bytes) => again.has(bytes.buffer)).length).toBe(8);
  });

  it('lends nothing for a payload larger than a block', () => {
    const stash = new PayloadStash();
    const big = stash.lend(MAX_BLOCK_BYTES + 1);
    stash.giveBack(big);
    expect(stash.lend(1).buffer).not.toBe(big.buffer);
  });

  it('takes back the block of a payload no method claimed', () => {
    const stash = new PayloadStash();
    const bytes = stash.lend(100);
    const token = stash.stash(bytes);
    stash.release({ chunk: token });
    expect(stash.size).toBe(0);
    expect(stash.lend(100).buffer).toBe(bytes.buffer);
  });
});
