import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OutputLog, RETAINED_OUTPUT_BYTES } from '../../../../src/server/process/output-log.js';
import { BufferPool } from '../../../../src/transport/buffer-pool.js';

const bytes = (n: number, fill = 0x61) => Buffer.alloc(n, fill);
const seqsOf = (chunks: { seq: number }[]) => chunks.map((c) => c.seq);

/** A log holding chunks of the given sizes as seqs 1, 2, …. */
function logOf(sizes: number[], limit?: number): OutputLog {
  const log = new OutputLog(limit);
  for (const [i, size] of sizes.entries()) log.append(i + 1, i % 2 ? 'stderr' : 'stdout', bytes(size, 0x61 + (i % 26)));
  return log;
}

/** The model: the longest suffix within the limit, at least the newest chunk. */
function retainedModel(sizes: number[], limit: number): number[] {
  let total = 0;
  let first = sizes.length;
  while (first > 0 && (first === sizes.length || total + sizes[first - 1]! <= limit)) total += sizes[--first]!;
  return sizes.map((_, i) => i + 1).slice(first);
}

describe('OutputLog: basics', () => {
  it('is empty at first', () => {
    const log = new OutputLog();
    expect(log.lastSeq).toBe(0);
    expect(log.text()).toBe('');
    expect(log.select(0, undefined)).toEqual([]);
    expect(log.select(0, 10)).toEqual([]);
  });

  it('keeps 1 MiB by default', () => {
    expect(RETAINED_OUTPUT_BYTES).toBe(1024 * 1024);
    const log = logOf([RETAINED_OUTPUT_BYTES / 2, RETAINED_OUTPUT_BYTES / 2]);
    expect(seqsOf(log.select(0, undefined))).toEqual([1, 2]);
    log.append(3, 'stdout', bytes(1));
    expect(seqsOf(log.select(0, undefined))).toEqual([2, 3]);
  });

  it('returns chunks as base64 with their seq and stream', () => {
    const log = new OutputLog();
    log.append(1, 'stdout', Buffer.from('out'));
    log.append(2, 'stderr', Buffer.from([0, 255]));
    log.append(3, 'pty', Buffer.alloc(0));
    expect(log.select(0, undefined)).toEqual([
      { seq: 1, stream: 'stdout', chunk: 'b3V0' },
      { seq: 2, stream: 'stderr', chunk: 'AP8=' },
      { seq: 3, stream: 'pty', chunk: '' },
    ]);
    expect(log.lastSeq).toBe(3);
  });

  it('text() joins the retained bytes as UTF-8, even across chunk boundaries', () => {
    const log = new OutputLog();
    const euro = Buffer.from('€');
    log.append(1, 'stdout', Buffer.concat([Buffer.from('a'), euro.subarray(0, 1)]));
    log.append(2, 'stderr', Buffer.concat([euro.subarray(1), Buffer.from('b')]));
    expect(log.text()).toBe('a€b');
  });
});

describe('OutputLog: retention', () => {
  it('evicts the oldest chunks first, keeping whole chunks within the limit', () => {
    const log = logOf([4, 4, 4], 10);
    expect(seqsOf(log.select(0, undefined))).toEqual([2, 3]);
    expect(log.text()).toBe('bbbbcccc');
  });

  it('keeps exactly the limit', () => {
    expect(seqsOf(logOf([5, 5], 10).select(0, undefined))).toEqual([1, 2]);
  });

  it('always keeps the newest chunk, even one larger than the limit', () => {
    const log = logOf([3, 50], 10);
    expect(seqsOf(log.select(0, undefined))).toEqual([2]);
    expect(log.lastSeq).toBe(2);
    log.append(3, 'stdout', bytes(2));
    expect(seqsOf(log.select(0, undefined))).toEqual([3]);
  });

  it('with a limit of 0 keeps only the newest chunk', () => {
    const log = logOf([1, 2, 3], 0);
    expect(seqsOf(log.select(0, undefined))).toEqual([3]);
  });

  it('retains the longest suffix within the limit, for any chunk sizes', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 40 }), { maxLength: 60 }), fc.nat({ max: 100 }), (sizes, limit) => {
        const log = logOf(sizes, limit);
        const expected = retainedModel(sizes, limit);
        expect(seqsOf(log.select(0, undefined))).toEqual(expected);
        expect(log.lastSeq).toBe(sizes.length);
        expect(Buffer.byteLength(log.text())).toBe(expected.reduce((sum, seq) => sum + sizes[seq - 1]!, 0));
      }),
      { numRuns: 150 },
    );
  });

  it('stays correct across its internal compaction (thousands of evictions)', () => {
    const log = new OutputLog(10);
    for (let seq = 1; seq <= 5000; seq++) log.append(seq, 'stdout', Buffer.from(String(seq % 10)));
    expect(seqsOf(log.select(0, undefined))).toEqual(Array.from({ length: 10 }, (_, i) => 4991 + i));
    expect(log.text()).toBe('1234567890');
    expect(seqsOf(log.select(4995, undefined))).toEqual([4996, 4997, 4998, 4999, 5000]);
    expect(log.lastSeq).toBe(5000);
  });
});

describe('OutputLog: select', () => {
  it('returns the chunks after a seq', () => {
    const log = logOf([1, 1, 1, 1]);
    expect(seqsOf(log.select(0, undefined))).toEqual([1, 2, 3, 4]);
    expect(seqsOf(log.select(2, undefined))).toEqual([3, 4]);
    expect(seqsOf(log.select(4, undefined))).toEqual([]);
    expect(seqsOf(log.select(99, undefined))).toEqual([]);
  });

  it('starts at the oldest retained chunk when asked for evicted ones', () => {
    const log = logOf([5, 5, 5, 5], 10);
    expect(seqsOf(log.select(1, undefined))).toEqual([3, 4]);
  });

  it('finds the next chunk when seqs have gaps', () => {
    const log = new OutputLog();
    for (const seq of [2, 5, 9]) log.append(seq, 'stdout', bytes(1));
    expect(seqsOf(log.select(0, undefined))).toEqual([2, 5, 9]);
    expect(seqsOf(log.select(3, undefined))).toEqual([5, 9]);
    expect(seqsOf(log.select(5, undefined))).toEqual([9]);
  });

  it('stops before maxBytes would be exceeded, never splitting a chunk', () => {
    const log = logOf([3, 3, 3, 3]);
    expect(seqsOf(log.select(0, 6))).toEqual([1, 2]);
    expect(seqsOf(log.select(0, 8))).toEqual([1, 2]);
    expect(seqsOf(log.select(0, 9))).toEqual([1, 2, 3]);
    expect(seqsOf(log.select(1, 6))).toEqual([2, 3]);
  });

  it('always returns the first chunk, however small maxBytes is', () => {
    const log = logOf([10, 1]);
    expect(seqsOf(log.select(0, 0))).toEqual([1]);
    expect(seqsOf(log.select(0, 5))).toEqual([1]);
    expect(seqsOf(log.select(1, 0))).toEqual([2]);
  });

  it('with maxBytes 0 stops after the first chunk even when the rest are empty', () => {
    const log = logOf([0, 0, 0]);
    expect(seqsOf(log.select(0, 0))).toEqual([1]);
  });

  it('picks the longest run after afterSeq within maxBytes (at least one), for any sizes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 20 }), { maxLength: 40 }),
        fc.nat({ max: 45 }),
        fc.option(fc.nat({ max: 60 }), { nil: undefined }),
        (sizes, afterSeq, maxBytes) => {
          const log = logOf(sizes);
          const selected = seqsOf(log.select(afterSeq, maxBytes));
          const candidates = sizes.map((_, i) => i + 1).filter((seq) => seq > afterSeq);
          let count = 0;
          let total = 0;
          for (const seq of candidates) {
            const size = sizes[seq - 1]!;
            if (maxBytes !== undefined && count > 0 && (total >= maxBytes || total + size > maxBytes)) break;
            count++;
            total += size;
          }
          expect(selected).toEqual(candidates.slice(0, count));
          if (maxBytes !== undefined && selected.length > 1) expect(total).toBeLessThanOrEqual(maxBytes);
        },
      ),
      { numRuns: 150 },
    );
  });
});

/** A pool of `slabBytes` slabs that records what the log takes and gives back. */
function recordingPool(slabBytes: number) {
  const pool = new BufferPool(slabBytes, 1024);
  const taken: Buffer[] = [];
  const given: Buffer[] = [];
  const givenSet = new Set<Buffer>();
  const recorder = Object.assign(Object.create(pool) as BufferPool, {
    take: (n: number) => {
      const slab = pool.take(n);
      taken.push(slab);
      return slab;
    },
    give: (slab: Buffer) => {
      given.push(slab);
      givenSet.add(slab);
      pool.give(slab);
    },
  });
  const live = () => taken.filter((slab) => !givenSet.has(slab));
  return { pool: recorder, taken, given, live };
}

describe('OutputLog: memory', () => {
  it('keeps a copy: the caller may reuse its buffer at once', () => {
    const log = new OutputLog();
    const buffer = Buffer.from('first');
    log.append(1, 'stdout', buffer);
    buffer.write('XXXXX');
    log.append(2, 'stdout', buffer);
    expect(log.select(0, undefined).map((c) => Buffer.from(c.chunk, 'base64').toString())).toEqual(['first', 'XXXXX']);
    expect(log.text()).toBe('firstXXXXX');
  });

  it('takes no pool slab while it holds little (an echo does not pin 64 KiB)', () => {
    const { pool, taken } = recordingPool(64 * 1024);
    const log = new OutputLog(RETAINED_OUTPUT_BYTES, pool);
    for (let seq = 1; seq <= 100; seq++) log.append(seq, 'stdout', bytes(100));
    expect(taken).toEqual([]);
    expect(log.text()).toHaveLength(10_000);
  });

  it('under a flood reuses the same pool slabs: each goes back once no retained chunk lies in it', () => {
    const { pool, taken, given, live } = recordingPool(64 * 1024);
    const log = new OutputLog(RETAINED_OUTPUT_BYTES, pool);
    for (let seq = 1; seq <= 200; seq++) log.append(seq, 'stdout', bytes(64 * 1024, 0x61 + (seq % 26)));
    // 1 MiB retained, one chunk per slab: 16 slabs live, the other 184 taken were given back,
    // and one more slab than that was ever made (the one taken before the oldest was let go).
    expect(live().length).toBe(16);
    expect(given.length).toBe(taken.length - 16);
    expect(new Set(taken.map((slab) => slab.buffer)).size).toBe(17);
    expect(seqsOf(log.select(0, undefined))).toEqual(Array.from({ length: 16 }, (_, i) => 185 + i));
  });

  it('holds the same chunks and bytes with any slab size; pins at most two pool slabs more than it keeps, and once compacted a quarter more', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 5000 }), { maxLength: 40 }),
        fc.integer({ min: 256, max: 8192 }),
        fc.nat({ max: 20_000 }),
        (sizes, slabBytes, limit) => {
          const { pool, live } = recordingPool(slabBytes);
          const log = new OutputLog(limit, pool);
          const appended = sizes.map((size, i) => Buffer.from(Array.from({ length: size }, (_, j) => (i * 31 + j) % 251)));
          for (const [i, chunk] of appended.entries()) log.append(i + 1, 'stdout', chunk);
          const expected = retainedModel(sizes, limit);
          const selected = log.select(0, undefined);
          expect(seqsOf(selected)).toEqual(expected);
          for (const chunk of selected) expect(Buffer.from(chunk.chunk, 'base64').equals(appended[chunk.seq - 1]!)).toBe(true);
          const retained = expected.reduce((sum, seq) => sum + sizes[seq - 1]!, 0);
          expect(live().length * slabBytes).toBeLessThanOrEqual(retained + 2 * slabBytes);
          // Its own slabs (while it holds less than a pool slab) add at most two more.
          expect(log.pinnedBytes).toBeLessThanOrEqual(retained + 4 * slabBytes);
          log.compact();
          expect(log.pinnedBytes).toBeLessThanOrEqual(retained * 1.25);
          expect(seqsOf(log.select(0, undefined))).toEqual(expected);
          for (const chunk of log.select(0, undefined))
            expect(Buffer.from(chunk.chunk, 'base64').equals(appended[chunk.seq - 1]!)).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('pins about what a closed process printed: a few bytes, or a mid-sized output in a pool slab', () => {
    const { pool, live } = recordingPool(64 * 1024);
    const tiny = new OutputLog(RETAINED_OUTPUT_BYTES, pool);
    tiny.append(1, 'stdout', Buffer.from('ok\n'));
    expect(tiny.pinnedBytes).toBeLessThanOrEqual(64);
    tiny.compact();
    expect(tiny.pinnedBytes).toBe(3);
    const mid = new OutputLog(RETAINED_OUTPUT_BYTES, pool);
    mid.append(1, 'stdout', bytes(33_000));
    expect(live()).toHaveLength(1);
    mid.compact();
    expect(mid.pinnedBytes).toBe(33_000);
    expect(live()).toHaveLength(0);
    expect(mid.text()).toBe('a'.repeat(33_000));
    mid.append(2, 'stdout', Buffer.from('late'));
    expect(mid.text().endsWith('late')).toBe(true);
  });

  it('gives every slab back once released, and is empty after', () => {
    const { pool, taken, given } = recordingPool(1024);
    const log = new OutputLog(10_000, pool);
    for (let seq = 1; seq <= 50; seq++) log.append(seq, 'stdout', bytes(700));
    log.release();
    expect(taken.length).toBeGreaterThan(5);
    expect(new Set(given).size).toBe(given.length);
    expect(taken.every((slab) => given.includes(slab))).toBe(true); // a few dozen: includes is fine
    expect(log.select(0, undefined)).toEqual([]);
    expect(log.text()).toBe('');
  });
});
