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

  it('has room while less than its limit is held besides the largest answer, and wakes the waits for room once answers go', async () => {
    const budget = new AnswerBudget(10);
    const giveBackLarge = budget.hold(30); // one answer, however large, leaves room: it may be on its way to a reading client
    await budget.whenRoom();
    // A file waiting for its turn leaves room too: a body must not starve behind a run of files.
    const waitingFile = budget.reserve(5);
    await budget.whenRoom();
    const giveBackBody = budget.hold(10);
    let roomAgain = false;
    const waiting = budget.whenRoom().then(() => (roomAgain = true));
    await settled();
    expect(roomAgain).toBe(false); // 10 held besides the largest
    const controller = new AbortController();
    const aborted = budget.whenRoom(controller.signal);
    controller.abort(new Error('timed out'));
    await expect(aborted).rejects.toThrow('timed out');
    giveBackBody();
    await waiting;
    giveBackLarge();
    (await waitingFile)();
    expect(budget.reserved).toBe(0);
  });

  it('completes every mix of files and bodies, and gives everything back', async () => {
    const answer = fc.oneof(fc.record({ file: fc.nat(30) }), fc.record({ body: fc.nat(30) }));
    await fc.assert(
      fc.asyncProperty(fc.array(answer, { minLength: 1, maxLength: 12 }), fc.array(fc.nat(), { maxLength: 30 }), async (answers, order) => {
        const LIMIT = 20;
        const budget = new AnswerBudget(LIMIT);
        const holding = new Map<number, number>(); // what each answer holds, as this test counts it
        const sent: Array<() => void> = [];
        let ready = 0;
        const readied = (index: number, bytes: number, giveBack: () => void) => {
          holding.set(index, bytes);
          ready += 1;
          sent.push(() => {
            holding.delete(index);
            giveBack();
          });
        };
        answers.forEach((spec, index) => {
          if ('file' in spec) {
            void budget.reserve(spec.file).then((giveBack) => readied(index, spec.file, giveBack));
          } else {
            // A body takes its chunks while there is room, and is held once it is whole (beyond the limit if need be).
            void budget.whenRoom().then(() => readied(index, spec.body, budget.hold(spec.body)));
          }
        });
        for (let step = 0; ready < answers.length || sent.length > 0; step++) {
          await settled();
          // Answers are waiting to be sent whenever some are not ready: nothing waits for anything else.
          expect(sent.length > 0 || ready === answers.length).toBe(true);
          sent.splice((order[step % Math.max(order.length, 1)] ?? 0) % Math.max(sent.length, 1), 1)[0]?.();
        }
        expect(budget.reserved).toBe(0);
      }),
      { numRuns: 200 },
    );
  });
});
