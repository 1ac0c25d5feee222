import { describe, expect, it } from 'vitest';
import { RequestOrder } from '../../../src/server/request-order.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('RequestOrder', () => {
  it('starts an ordered task at once when nothing is pending, and the next only after it has finished', async () => {
    const order = new RequestOrder();
    const log: string[] = [];
    let finishFirst!: () => void;
    const first = order.ordered(async () => {
      log.push('first starts');
      await new Promise<void>((resolve) => (finishFirst = resolve));
      log.push('first ends');
    });
    expect(log).toEqual(['first starts']); // synchronously
    const second = order.ordered(async () => void log.push('second'));
    await tick();
    expect(log).toEqual(['first starts']);
    finishFirst();
    await Promise.all([first, second]);
    expect(log).toEqual(['first starts', 'first ends', 'second']);
  });

  it('runs the next task after a failed one, and hands each its own outcome', async () => {
    const order = new RequestOrder();
    const failed = order.ordered(async () => {
      throw new Error('no');
    });
    const next = order.ordered(async () => 'yes');
    await expect(failed).rejects.toThrow('no');
    await expect(next).resolves.toBe('yes');
  });

  it('lets an overtaking task run once the tasks before it have started, not finished', async () => {
    const order = new RequestOrder();
    const log: string[] = [];
    let finish!: () => void;
    const slow = order.ordered(async () => {
      log.push('slow starts');
      await new Promise<void>((resolve) => (finish = resolve));
    });
    const queued = order.ordered(async () => void log.push('queued'));
    const overtaking = order.overtaking(async () => void log.push('overtaking'));
    await tick();
    // The queued task has not started, so neither has the one behind it.
    expect(log).toEqual(['slow starts']);
    finish();
    await Promise.all([slow, queued, overtaking]);
    expect(log).toEqual(['slow starts', 'queued', 'overtaking']);
    const alone = new RequestOrder();
    const ran: string[] = [];
    void alone.overtaking(async () => void ran.push('now'));
    expect(ran).toEqual(['now']);
  });
});

describe('RequestOrder, shareable tasks', () => {
  it('starts shareable tasks in a row side by side, but finishes them in order', async () => {
    const order = new RequestOrder();
    const log: string[] = [];
    const gates = [0, 1, 2].map(() => {
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      return { gate, open };
    });
    const results = [0, 1, 2].map((i) =>
      order.ordered(async () => {
        log.push(`start ${i}`);
        await gates[i]!.gate;
        return i;
      }, true),
    );
    const finished: number[] = [];
    for (const result of results) void result.then((i) => finished.push(i));
    const after = order.ordered(async () => void log.push('plain'));
    expect(log).toEqual(['start 0', 'start 1', 'start 2']);
    gates[2]!.open();
    gates[1]!.open();
    await tick();
    expect(finished).toEqual([]); // the first is still reading
    gates[0]!.open();
    await after;
    expect(finished).toEqual([0, 1, 2]);
    expect(log.at(-1)).toBe('plain');
  });
});

describe('RequestOrder, a shareable task that fails early', () => {
  it('passes the failure on after the task ahead of it, never as an unhandled rejection', async () => {
    const order = new RequestOrder();
    let finish!: () => void;
    const first = order.ordered(() => new Promise<string>((resolve) => (finish = () => resolve('first'))), true);
    const second = order.ordered(async () => {
      throw new Error('unknown handle');
    }, true);
    await tick(); // an unhandled rejection would be reported here
    finish();
    await expect(first).resolves.toBe('first');
    await expect(second).rejects.toThrow('unknown handle');
  });
});
