import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inBatches, SIDE_BY_SIDE } from '../../../../src/server/fs/side-by-side.js';

interface Entry {
  index: number;
  leaf: boolean;
  fails: boolean;
}

/** Entries in a random order of leaves and not, a few of them failing (each after its own number of turns). */
const entriesArbitrary = fc
  .array(fc.record({ leaf: fc.boolean(), fails: fc.nat({ max: 24 }).map((draw) => draw === 0) }), { maxLength: 300 })
  .map((shapes) => shapes.map((shape, index) => ({ index, ...shape })));

/** Runs inBatches over `entries`, each act taking a turn of the event loop or two; what happened. */
async function run(entries: Entry[], asyncIterable: boolean) {
  const started: number[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  let aloneBroken = false;
  const act = async (entry: Entry) => {
    started.push(entry.index);
    inFlight += 1;
    mostInFlight = Math.max(mostInFlight, inFlight);
    if (!entry.leaf && inFlight > 1) aloneBroken = true;
    for (let turn = entry.index % 3; turn >= 0; turn--) await new Promise((resolve) => setImmediate(resolve));
    if (!entry.leaf && inFlight > 1) aloneBroken = true;
    inFlight -= 1;
    if (entry.fails) throw new Error(`entry ${entry.index}`);
  };
  async function* listed() {
    yield* entries;
  }
  const source = asyncIterable ? listed() : entries;
  const outcome = await inBatches(source, (entry) => entry.leaf, act).then(
    () => undefined,
    (error: Error) => error.message,
  );
  return { started, mostInFlight, aloneBroken, outcome, inFlightAtEnd: inFlight };
}

describe('inBatches', () => {
  it('keeps the order, runs a non-leaf alone, bounds the leaves at once, and stops at the first failure', async () => {
    await fc.assert(
      fc.asyncProperty(entriesArbitrary, fc.boolean(), async (entries, asyncIterable) => {
        const { started, mostInFlight, aloneBroken, outcome, inFlightAtEnd } = await run(entries, asyncIterable);
        expect(aloneBroken).toBe(false);
        expect(mostInFlight).toBeLessThanOrEqual(SIDE_BY_SIDE);
        expect(inFlightAtEnd).toBe(0);
        expect(started).toEqual([...started].sort((a, b) => a - b));
        const failing = entries.find((entry) => entry.fails);
        if (!failing) {
          expect(outcome).toBeUndefined();
          expect(started).toHaveLength(entries.length);
          return;
        }
        expect(outcome).toBe(`entry ${failing.index}`);
        // Everything before the failure was acted on; nothing after it, but for leaves of its batch.
        expect(started.slice(0, failing.index)).toEqual(entries.slice(0, failing.index).map((entry) => entry.index));
        for (const index of started.slice(failing.index + 1)) {
          expect(entries.slice(failing.index, index + 1).every((entry) => entry.leaf)).toBe(true);
          expect(index - failing.index).toBeLessThan(SIDE_BY_SIDE);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('runs a full batch of leaves side by side', async () => {
    const entries = Array.from({ length: SIDE_BY_SIDE * 2 + 5 }, (_, index) => ({ index, leaf: true, fails: false }));
    const { mostInFlight, started } = await run(entries, false);
    expect(mostInFlight).toBe(SIDE_BY_SIDE);
    expect(started).toHaveLength(entries.length);
  });
});
