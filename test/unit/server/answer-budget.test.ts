import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AnswerBudget } from '../../../src/server/answer-budget.js';

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('AnswerBudget', () => {
  it('grants what fits at once, holds the rest in order, and lets an oversized one in alone', async () => {
    const budget = new AnswerBudget(10);
    const granted: string[] = [];
    const ask = async (name: string, bytes: number) => {
      const giveBack = await budget.reserve(bytes);
      granted.push(name);
      return giveBack;
    };
    const a = ask('a', 6);
    const b = ask('b', 6); // does not fit beside a
    const c = ask('c', 1); // fits, but waits its turn behind b
    const giveBackA = await a;
    await settled();
    expect(granted).toEqual(['a']);
    giveBackA();
    giveBackA(); // a second call gives back nothing more
    const giveBackB = await b;
    await c;
    expect(granted).toEqual(['a', 'b', 'c']);
    expect(budget.reserved).toBe(7);
    const huge = ask('huge', 100);
    await settled();
    expect(granted).not.toContain('huge');
    giveBackB();
    (await c)();
    await huge;
    expect(budget.reserved).toBe(100);
  });

  it('never holds more than its limit unless one reservation alone is larger, and grants every one', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(30), { minLength: 1, maxLength: 20 }),
        fc.array(fc.nat(), { maxLength: 40 }),
        async (sizes, order) => {
          const budget = new AnswerBudget(20);
          // The grants as this test sees them, in the order made: what is held, and how many hold more than nothing.
          const ledger = new Set<number>();
          const held: Array<() => void> = [];
          let granted = 0;
          sizes.forEach((size, index) => {
            void budget.reserve(size).then((giveBack) => {
              granted += 1;
              ledger.add(index);
              const holding = [...ledger].map((i) => sizes[i]!);
              const total = holding.reduce((sum, bytes) => sum + bytes, 0);
              expect(total <= 20 || holding.filter((bytes) => bytes > 0).length === 1).toBe(true);
              held.push(() => {
                ledger.delete(index);
                giveBack();
              });
            });
          });
          for (let step = 0; granted < sizes.length || held.length > 0; step++) {
            await settled();
            const pick = held.splice((order[step % Math.max(order.length, 1)] ?? 0) % Math.max(held.length, 1), 1)[0];
            pick?.();
          }
          expect(budget.reserved).toBe(0);
        },
      ),
      { numRuns: 100 },
    );
  });
});
