import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SeqOrderer } from '../../../src/client/seq-orderer.js';

interface Event {
  seq: number;
  tag?: string;
}

function orderer() {
  const published: Event[] = [];
  const ordered = new SeqOrderer<Event>((event) => published.push(event));
  return { ordered, published, seqs: () => published.map((e) => e.seq) };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('SeqOrderer', () => {
  it('publishes in-order events at once', () => {
    const { ordered, seqs } = orderer();
    expect(ordered.publishedThrough).toBe(0);
    ordered.push({ seq: 1 });
    expect(seqs()).toEqual([1]);
    ordered.push({ seq: 2 });
    expect(seqs()).toEqual([1, 2]);
    expect(ordered.publishedThrough).toBe(2);
  });

  it('holds an event until every lower seq has been published', () => {
    const { ordered, seqs } = orderer();
    ordered.push({ seq: 3 });
    ordered.push({ seq: 2 });
    expect(seqs()).toEqual([]);
    expect(ordered.publishedThrough).toBe(0);
    ordered.push({ seq: 1 });
    expect(seqs()).toEqual([1, 2, 3]);
    expect(ordered.publishedThrough).toBe(3);
  });

  it('publishes the same event objects it was given', () => {
    const { ordered, published } = orderer();
    const one = { seq: 1, tag: 'one' };
    const two = { seq: 2, tag: 'two' };
    ordered.push(two);
    ordered.push(one);
    expect(published[0]).toBe(one);
    expect(published[1]).toBe(two);
  });

  it('waits forever behind a gap, publishing only what precedes it', () => {
    const { ordered, seqs } = orderer();
    for (const seq of [1, 2, 4, 5, 6]) ordered.push({ seq });
    expect(seqs()).toEqual([1, 2]);
    expect(ordered.publishedThrough).toBe(2);
    ordered.push({ seq: 3 });
    expect(seqs()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('drops duplicates of published seqs', () => {
    const { ordered, published } = orderer();
    ordered.push({ seq: 1, tag: 'a' });
    ordered.push({ seq: 1, tag: 'b' });
    ordered.push({ seq: 2, tag: 'a' });
    ordered.push({ seq: 1, tag: 'c' });
    expect(published).toEqual([
      { seq: 1, tag: 'a' },
      { seq: 2, tag: 'a' },
    ]);
  });

  it('keeps the first of duplicate waiting events', () => {
    const { ordered, published } = orderer();
    ordered.push({ seq: 2, tag: 'first' });
    ordered.push({ seq: 2, tag: 'second' });
    ordered.push({ seq: 1 });
    expect(published).toEqual([{ seq: 1 }, { seq: 2, tag: 'first' }]);
  });

  it('drops seqs at or below zero', () => {
    const { ordered, seqs } = orderer();
    ordered.push({ seq: 0 });
    ordered.push({ seq: -5 });
    expect(seqs()).toEqual([]);
    ordered.push({ seq: 1 });
    expect(seqs()).toEqual([1]);
  });

  it('publishes every event exactly once, in seq order, for any arrival order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 60 }).chain((n) => fc.shuffledSubarray(range(n), { minLength: n, maxLength: n })),
        (arrival) => {
          const { ordered, seqs } = orderer();
          for (const seq of arrival) ordered.push({ seq });
          expect(seqs()).toEqual(range(arrival.length));
          expect(ordered.publishedThrough).toBe(arrival.length);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('is never out of order after each push, with duplicates and gaps', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -2, max: 30 }), { maxLength: 80 }), (arrival) => {
        const { ordered, published, seqs } = orderer();
        const seen = new Set<number>();
        for (const [i, seq] of arrival.entries()) {
          ordered.push({ seq, tag: String(i) });
          seen.add(seq);
          // What is published is exactly 1..k, the longest run of seqs seen so far.
          let k = 0;
          while (seen.has(k + 1)) k++;
          expect(seqs()).toEqual(range(k));
          expect(ordered.publishedThrough).toBe(k);
        }
        // Each published event is the first one pushed with its seq.
        for (const event of published) expect(event.tag).toBe(String(arrival.indexOf(event.seq)));
      }),
      { numRuns: 150 },
    );
  });

  it('handles a long reversed run without recursion', () => {
    const { ordered, seqs } = orderer();
    const n = 20_000;
    for (let seq = n; seq >= 1; seq--) ordered.push({ seq });
    expect(seqs()).toHaveLength(n);
    expect(ordered.publishedThrough).toBe(n);
  });
});
