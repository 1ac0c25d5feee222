/**
 * Concurrency properties (fast-check): random interleavings of start, write,
 * read (afterSeq, waitMs), resize, signal and terminate over up to 20
 * processes on pipes and PTYs, with streamed HTTP bodies in between. Requests
 * are pipelined without waiting, except at generated sync points.
 *
 * Invariants per process: seqs strictly increase and are contiguous, exactly
 * one `exited` and one `closed`, `closed` last (nothing after it); every
 * request is answered exactly once; nothing the case started is left running.
 */
import fc from 'fast-check';
import http from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { closeLoopback, listenLoopback } from './support/loopback.js';
import { findByEnviron, waitDead } from './support/proc.js';
import { b64, ServerProcess, type Json } from './support/server-process.js';

const RUNS = Number(process.env.INTERLEAVE_RUNS ?? 40);
const SLOTS = 20;
const PROGRAMS = {
  echoLoop: { tty: false, argv: ['sh', '-c', 'while read l; do echo "o:$l"; echo "e:$l" >&2; done; echo end'] },
  burst: { tty: false, argv: ['sh', '-c', 'seq 1 3000; seq 1 500 >&2'] },
  ptyCat: { tty: true, argv: ['cat'] },
  ptyShell: { tty: true, argv: ['sh', '-c', 'stty -echo; while read l; do echo "t:$l"; done'] },
  sleeper: { tty: false, argv: ['sleep', '30'] },
} as const;

type Op =
  | { kind: 'start'; slot: number; program: keyof typeof PROGRAMS }
  | { kind: 'write'; slot: number; text: string; closeStdin: boolean }
  | { kind: 'read'; slot: number; afterSeq: number; waitMs: number }
  | { kind: 'resize'; slot: number; rows: number; cols: number }
  | { kind: 'signal'; slot: number; signal: string }
  | { kind: 'terminate'; slot: number }
  | { kind: 'http' }
  | { kind: 'sync' };

const slot = fc.integer({ min: 0, max: SLOTS - 1 });
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('start' as const),
      slot,
      program: fc.constantFrom(...(Object.keys(PROGRAMS) as Array<keyof typeof PROGRAMS>)),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('write' as const),
      slot,
      text: fc.stringMatching(/^[a-z0-9 ]{0,12}\n$/),
      closeStdin: fc.boolean(),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('read' as const), slot, afterSeq: fc.nat(20), waitMs: fc.nat(30) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('resize' as const),
      slot,
      rows: fc.integer({ min: 1, max: 200 }),
      cols: fc.integer({ min: 1, max: 300 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('signal' as const),
      slot,
      signal: fc.constantFrom('SIGTERM', 'SIGINT', 'SIGHUP', 'SIGCONT', 'SIGSTOP', 'TERM'),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('terminate' as const), slot }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'http' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'sync' as const }) },
);

let server: ServerProcess;
let web: http.Server;
let base: string;
let caseNumber = 0;

beforeAll(async () => {
  web = http.createServer((_req, res) => {
    let n = 0;
    const timer = setInterval(() => {
      res.write(`chunk${n};`);
      if (++n === 5) {
        clearInterval(timer);
        res.end();
      }
    }, 1);
  });
  base = await listenLoopback(web);
  server = await ServerProcess.started();
});
afterAll(async () => {
  await server.dispose();
  await closeLoopback(web);
});

function checkEvents(events: Json[]): void {
  const seqs = events.map((m) => m.params.seq);
  expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  expect(events.filter((m) => m.method === 'process/exited')).toHaveLength(1);
  expect(events.filter((m) => m.method === 'process/closed')).toHaveLength(1);
  expect(events.at(-1)!.method).toBe('process/closed');
}

async function runCase(ops: Op[]): Promise<void> {
  const prefix = `c${++caseNumber}`;
  const marker = `interleave-${prefix}-${process.pid}`;
  const started = new Set<string>();
  const pending: Array<Promise<Json>> = [];
  const reads: Array<Promise<Json>> = [];
  let httpCount = 0;
  const id = (n: number) => `${prefix}-p${n}`;
  const call = (method: string, params: Json) => {
    const answer = server.call(method, params);
    pending.push(answer);
    return answer;
  };
  for (const step of ops) {
    if (step.kind === 'sync') await Promise.all(pending);
    else if (step.kind === 'http')
      call('http/request', { method: 'GET', url: base, requestId: `${prefix}-h${httpCount++}`, streamResponse: true });
    else if (step.kind === 'start') {
      const program = PROGRAMS[step.program];
      if (started.has(id(step.slot))) continue;
      started.add(id(step.slot));
      const env = { PATH: '/usr/bin:/bin', MARK: marker }; // inherited by every descendant: found through /proc/*/environ
      call('process/start', { processId: id(step.slot), argv: program.argv, cwd: '/tmp', env, tty: program.tty, pipeStdin: !program.tty });
    } else if (step.kind === 'write')
      call('process/write', { processId: id(step.slot), chunk: b64(step.text), closeStdin: step.closeStdin });
    else if (step.kind === 'read')
      reads.push(call('process/read', { processId: id(step.slot), afterSeq: step.afterSeq, waitMs: step.waitMs }));
    else if (step.kind === 'resize') call('process/resize', { processId: id(step.slot), rows: step.rows, cols: step.cols });
    else if (step.kind === 'signal') call('process/signal', { processId: id(step.slot), signal: step.signal });
    else call('process/terminate', { processId: id(step.slot) });
  }
  await Promise.all(pending);
  // End every process that is still running, then check its whole event stream.
  for (const processId of started) call('process/terminate', { processId });
  await Promise.all(pending);
  for (const processId of started) {
    const startAnswer = server.messages.find((m) => m.id !== undefined && !('method' in m) && m.result?.processId === processId);
    if (!startAnswer) continue; // the start was refused (e.g. a slot reused after a failed start)
    await server.waitClosed(processId, 10_000);
    checkEvents(server.notifications(processId));
  }
  for (const answer of await Promise.all(reads)) {
    if (answer.error) continue;
    const seqs = answer.result.chunks.map((chunk: Json) => chunk.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
  }
  for (let n = 0; n < httpCount; n++) {
    await server.waitFor((m) => m.method === 'http/request/bodyDelta' && m.params.requestId === `${prefix}-h${n}` && m.params.done, 10_000);
  }
  expect(await waitDead(findByEnviron(`MARK=${marker}`))).toEqual([]);
}

it(`keeps every process's events contiguous and complete under ${RUNS} random interleavings`, async () => {
  await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 60 }), runCase), { numRuns: RUNS, endOnFailure: true });
  // Every request the cases sent was answered exactly once.
  const answers = new Map<unknown, number>();
  for (const message of server.messages) if (!('method' in message)) answers.set(message.id, (answers.get(message.id) ?? 0) + 1);
  expect([...answers.values()].filter((count) => count !== 1)).toEqual([]);
  expect(server.child.exitCode).toBeNull();
}, 120_000);
