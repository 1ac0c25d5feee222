import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManagedProcess, type ProcessEventSink } from '../../../../src/server/process/managed-process.js';

/** A process whose events are recorded as `[kind, seq, detail]`. */
function recorded(sandboxed: boolean) {
  const events: Array<[string, number, unknown]> = [];
  const sink: ProcessEventSink = {
    output: (_id, seq, _stream, bytes) => events.push(['output', seq, bytes.toString()]),
    exited: (_id, seq, exitCode, sandboxDenied) => events.push(['exited', seq, { exitCode, sandboxDenied }]),
    closed: (_id, seq) => events.push(['closed', seq, undefined]),
    generation: () => 2,
  };
  const process = new ManagedProcess('p', false, false, sink);
  process.sandboxed = sandboxed;
  // Started: what it tells from the next turn on reaches the sink as it happens (before that, it
  // waits for the start's answer).
  process.settleStart();
  return { process, events };
}

/** The turn after the start, by which its answer is out. */
const afterStart = () => new Promise((resolve) => setImmediate(resolve));

afterEach(() => {
  vi.useRealTimers();
});

describe('ManagedProcess: a confined failure waits for the rest of its output', () => {
  it('reports the exit after output that was still in the pipe, and reads the denial in it', async () => {
    const { process, events } = recorded(true);
    await afterStart();
    process.exit({ code: 1 });
    expect(events).toEqual([]);
    process.output('stderr', Buffer.from("touch: cannot touch '/etc/x': Read-only file system\n"));
    process.close();
    expect(events).toEqual([
      ['output', 1, "touch: cannot touch '/etc/x': Read-only file system\n"],
      ['exited', 2, { exitCode: 1, sandboxDenied: true }],
      ['closed', 3, undefined],
    ]);
  });

  it('reports it after a bound when the pipes stay open (a descendant holds them)', () => {
    vi.useFakeTimers();
    const { process, events } = recorded(true);
    process.exit({ code: 1 });
    vi.advanceTimersByTime(249);
    expect(events).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(events).toEqual([['exited', 1, { exitCode: 1, sandboxDenied: false }]]);
    process.close();
    expect(events.map(([kind]) => kind)).toEqual(['exited', 'closed']);
  });

  it('reports at once an exit that is not a confined failure', async () => {
    for (const [sandboxed, code] of [
      [true, 0],
      [false, 1],
    ] as const) {
      const { process, events } = recorded(sandboxed);
      await afterStart();
      process.exit({ code });
      expect(events).toEqual([['exited', 1, { exitCode: code, sandboxDenied: false }]]);
    }
  });
});

describe('ManagedProcess: what it tells before its start is answered', () => {
  it('follows the answer, in order, with its own copy of output bytes that are lent', async () => {
    const { process, events } = recorded(false);
    const lent = Buffer.from('early');
    process.output('stdout', lent);
    lent.fill(0); // the reader reuses its buffer at once
    process.exit({ code: 0 });
    expect(events).toEqual([]);
    await afterStart();
    expect(events).toEqual([
      ['output', 1, 'early'],
      ['exited', 2, { exitCode: 0, sandboxDenied: false }],
    ]);
    process.close();
    expect(events.map(([kind]) => kind)).toEqual(['output', 'exited', 'closed']);
  });
});
