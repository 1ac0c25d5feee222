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

  it('lets the oldest body grow past the limit, holds a younger one until it fits or is the oldest, and ends a wait on abort', async () => {
    const budget = new AnswerBudget(10);
    const older = budget.growing();
    const younger = budget.growing();
    await older.grow(8);
    let youngerGrew = false;
    const growing = younger.grow(5).then(() => (youngerGrew = true));
    await settled();
    expect(youngerGrew).toBe(false); // 13 would not fit, and it is not the oldest
    await older.grow(30); // the oldest never waits
    expect(budget.reserved).toBe(38);
    older.release();
    await growing; // now the oldest
    expect(budget.reserved).toBe(5);
    const third = budget.growing();
    const controller = new AbortController();
    const waiting = third.grow(20, controller.signal);
    controller.abort(new Error('timed out'));
    await expect(waiting).rejects.toThrow('timed out');
    const released = third.grow(20);
    third.release();
    await expect(released).rejects.toThrow('released');
    younger.release();
    expect(budget.reserved).toBe(0);
  });

  it('completes every mix of whole reservations and growing bodies, holding at most its limit beside the largest one', async () => {
    const actor = fc.oneof(fc.record({ whole: fc.nat(30) }), fc.record({ steps: fc.array(fc.nat(12), { minLength: 1, maxLength: 5 }) }));
    await fc.assert(
      fc.asyncProperty(fc.array(actor, { minLength: 1, maxLength: 12 }), fc.array(fc.nat(), { maxLength: 30 }), async (actors, order) => {
        const LIMIT = 20;
        const budget = new AnswerBudget(LIMIT);
        const holding = new Map<number, number>(); // what each actor holds, as this test counts it
        const done: Array<() => void> = [];
        let completed = 0;
        const check = () => {
          const sizes = [...holding.values()];
          const total = sizes.reduce((sum, bytes) => sum + bytes, 0);
          expect(total - Math.max(0, ...sizes)).toBeLessThanOrEqual(LIMIT);
        };
        const finish = (index: number, giveBack: () => void) => {
          completed += 1;
          done.push(() => {
            holding.delete(index);
            giveBack();
          });
        };
        actors.forEach((spec, index) => {
          if ('whole' in spec) {
            void budget.reserve(spec.whole).then((giveBack) => {
              holding.set(index, spec.whole);
              check();
              finish(index, giveBack);
            });
            return;
          }
          const body = budget.growing();
          void (async () => {
            for (const bytes of spec.steps) {
              await body.grow(bytes);
              holding.set(index, (holding.get(index) ?? 0) + bytes);
              check();
            }
            finish(index, body.release);
          })();
        });
        for (let step = 0; completed < actors.length || done.length > 0; step++) {
          await settled();
          // Nothing to give back while some have not completed: they wait for each other.
          expect(done.length > 0 || completed === actors.length).toBe(true);
          done.splice((order[step % Math.max(order.length, 1)] ?? 0) % Math.max(done.length, 1), 1)[0]?.();
        }
        expect(budget.reserved).toBe(0);
      }),
      { numRuns: 200 },
    );
  });
});
