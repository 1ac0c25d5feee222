import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventQueue } from '../../../src/client/event-queue.js';

async function drain<T>(queue: AsyncIterable<T>): Promise<T[]> {
  const values: T[] = [];
  for await (const value of queue) values.push(value);
  return values;
}

/** Whether `promise` has settled after the pending microtasks ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('EventQueue', () => {
  it('yields pushed values in order, then ends', async () => {
    const queue = new EventQueue<number>();
    queue.push(1);
    queue.push(2);
    queue.push(3);
    queue.end();
    expect(await drain(queue)).toEqual([1, 2, 3]);
  });

  it('delivers values queued before end() even though end() came first in time', async () => {
    const queue = new EventQueue<string>();
    queue.push('a');
    queue.end();
    expect(await queue.next()).toEqual({ value: 'a', done: false });
    expect(await queue.next()).toEqual({ value: undefined, done: true });
    expect(await queue.next()).toEqual({ value: undefined, done: true });
  });

  it('ignores pushes after end()', async () => {
    const queue = new EventQueue<number>();
    queue.push(1);
    queue.end();
    queue.push(2);
    expect(await drain(queue)).toEqual([1]);
  });

  it('end() is idempotent', async () => {
    const queue = new EventQueue<number>();
    queue.end();
    queue.end();
    expect(await drain(queue)).toEqual([]);
  });

  it('a consumer waiting on an empty queue gets the next push', async () => {
    const queue = new EventQueue<number>();
    const pending = queue.next();
    expect(await settled(pending)).toBe(false);
    queue.push(42);
    expect(await pending).toEqual({ value: 42, done: false });
  });

  it('several waiting consumers are served in the order they asked', async () => {
    const queue = new EventQueue<string>();
    const first = queue.next();
    const second = queue.next();
    const third = queue.next();
    queue.push('a');
    queue.push('b');
    expect(await first).toEqual({ value: 'a', done: false });
    expect(await second).toEqual({ value: 'b', done: false });
    expect(await settled(third)).toBe(false);
    queue.end();
    expect(await third).toEqual({ value: undefined, done: true });
  });

  it('end() releases every waiting consumer', async () => {
    const queue = new EventQueue<number>();
    const waiting = [queue.next(), queue.next(), queue.next()];
    queue.end();
    expect(await Promise.all(waiting)).toEqual(Array(3).fill({ value: undefined, done: true }));
  });

  it('a for-await loop started before the producer sees everything', async () => {
    const queue = new EventQueue<number>();
    const consumed = drain(queue);
    for (let i = 0; i < 5; i++) {
      queue.push(i);
      await Promise.resolve();
    }
    queue.push(5);
    queue.end();
    expect(await consumed).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('keeps falsy values and undefined as values', async () => {
    const queue = new EventQueue<unknown>();
    for (const value of [0, '', false, null, undefined, Number.NaN]) queue.push(value);
    queue.end();
    expect(await drain(queue)).toEqual([0, '', false, null, undefined, Number.NaN]);
  });

  it('stays in order across its internal compaction (thousands of values)', async () => {
    const queue = new EventQueue<number>();
    const n = 5000;
    const received: number[] = [];
    for (let i = 0; i < n; i++) {
      queue.push(i);
      if (i % 3 === 0) received.push((await queue.next()).value as number);
    }
    queue.end();
    received.push(...(await drain(queue)));
    expect(received).toEqual(Array.from({ length: n }, (_, i) => i));
  });

  it('delivers any interleaving of pushes and reads in order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom('push', 'read'), { maxLength: 60 }), async (ops) => {
        const queue = new EventQueue<number>();
        const reads: Promise<IteratorResult<number>>[] = [];
        let pushed = 0;
        for (const op of ops) {
          if (op === 'push') queue.push(pushed++);
          else reads.push(queue.next());
        }
        queue.end();
        const results = await Promise.all(reads);
        const values = results.filter((r) => !r.done).map((r) => r.value);
        // Reads get a prefix of the pushed values; ends only once nothing is left.
        expect(values).toEqual(Array.from({ length: values.length }, (_, i) => i));
        expect(results.slice(0, values.length).every((r) => !r.done)).toBe(true);
        if (values.length < reads.length) expect(values.length).toBe(pushed);
        expect(await drain(queue)).toEqual(Array.from({ length: pushed - values.length }, (_, i) => values.length + i));
      }),
      { numRuns: 200 },
    );
  });
});
