import { describe, expect, it } from 'vitest';
import { BufferPool } from '../../../src/transport/buffer-pool.js';

describe('BufferPool', () => {
  it('hands a slab given back out again, and makes a new one when none is free', () => {
    const pool = new BufferPool(1024, 4);
    const first = pool.take(100);
    expect(first.length).toBe(100);
    pool.give(first);
    const again = pool.take(1024);
    expect(again.buffer).toBe(first.buffer);
    expect(pool.take(10).buffer).not.toBe(first.buffer);
  });

  it('gives a request larger than a slab its own buffer, and never takes it back', () => {
    const pool = new BufferPool(1024, 4);
    const large = pool.take(4096);
    expect(large.length).toBe(4096);
    pool.give(large);
    expect(pool.take(10).buffer).not.toBe(large.buffer);
  });

  it('ignores foreign buffers, even of the slab size', () => {
    const pool = new BufferPool(1024, 4);
    const foreign = Buffer.allocUnsafeSlow(1024);
    pool.give(foreign);
    expect(pool.take(1024).buffer).not.toBe(foreign.buffer);
  });

  it('takes a slab back once, so that two owners never share it', () => {
    const pool = new BufferPool(1024, 4);
    const slab = pool.take(1024);
    pool.give(slab);
    pool.give(slab);
    const a = pool.take(1024);
    const b = pool.take(1024);
    expect(a.buffer).toBe(slab.buffer);
    expect(b.buffer).not.toBe(slab.buffer);
  });

  it('keeps at most maxFree slabs', () => {
    const pool = new BufferPool(1024, 2);
    const slabs = [pool.take(1024), pool.take(1024), pool.take(1024)];
    for (const slab of slabs) pool.give(slab);
    const taken = [pool.take(1024), pool.take(1024), pool.take(1024)].map((b) => b.buffer);
    expect(taken.filter((buffer) => slabs.some((slab) => slab.buffer === buffer))).toHaveLength(2);
  });
});
