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
  return { process, events };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('ManagedProcess: a confined failure waits for the rest of its output', () => {
  it('reports the exit after output that was still in the pipe, and reads the denial in it', () => {
    const { process, events } = recorded(true);
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

  it('reports at once an exit that is not a confined failure', () => {
    for (const [sandboxed, code] of [
      [true, 0],
      [false, 1],
    ] as const) {
      const { process, events } = recorded(sandboxed);
      process.exit({ code });
      expect(events).toEqual([['exited', 1, { exitCode: code, sandboxDenied: false }]]);
    }
  });
});
