/**
 * What a process session missed, after a resume (while its connection was
 * down) or when its last event came before others: the output chunks come
 * from `process/read` with `afterSeq`; the exit and close events, which a
 * read reports as flags, take the seqs the chunks leave free below `nextSeq`
 * (generation 2 counts them). Seqs that remain unexplained belong to output
 * the server no longer keeps.
 */
import type { OutputStream } from '../protocol/types.js';

/** What catching up needs of a `process/read` result (chunks decoded). */
export interface ReadState {
  chunks: Array<{ seq: number; stream: OutputStream; chunk: Buffer }>;
  nextSeq: number;
  exited: boolean;
  exitCode: number | null;
  closed: boolean;
}

type SequencedEvent =
  | { type: 'output'; seq: number; stream: OutputStream; chunk: Buffer }
  | { type: 'exited'; seq: number; exitCode: number }
  | { type: 'closed'; seq: number };

export interface CatchUpTarget {
  /** The highest seq published so far. */
  readonly publishedThrough: number;
  /** Whether this seq is published or waiting. */
  has(seq: number): boolean;
  readonly exitPublished: boolean;
  receive(event: SequencedEvent): void;
}

/** Reads until nothing is left; resolves with an error message if output was lost, else undefined. */
export async function catchUp(target: CatchUpTarget, read: (afterSeq: number) => Promise<ReadState>): Promise<string | undefined> {
  let cursor = target.publishedThrough;
  for (;;) {
    const result = await read(cursor);
    for (const { seq, stream, chunk } of result.chunks) target.receive({ type: 'output', seq, stream, chunk });
    const last = result.chunks[result.chunks.length - 1];
    if (last && last.seq <= cursor) {
      // Asked again from the same cursor, it would answer the same for ever.
      return `process/read after seq ${cursor} answered seq ${last.seq}: the server does not honour afterSeq`;
    }
    if (last) {
      cursor = last.seq;
      continue;
    }
    return placeEndEvents(target, result);
  }
}

function placeEndEvents(target: CatchUpTarget, result: ReadState): string | undefined {
  const free: number[] = [];
  for (let seq = target.publishedThrough + 1; seq < result.nextSeq; seq++) if (!target.has(seq)) free.push(seq);
  if (result.closed && free[free.length - 1] === result.nextSeq - 1) {
    const closedSeq = free.pop()!;
    placeExit(target, result, free);
    target.receive({ type: 'closed', seq: closedSeq });
  } else {
    placeExit(target, result, free);
  }
  if (free.length === 0) return undefined;
  return `output seq ${free[0]}..${free[free.length - 1]} was lost: it never arrived, and the server no longer keeps it`;
}

/** The exit takes the one free seq left (the exit may come before the last output, §1d). */
function placeExit(target: CatchUpTarget, result: ReadState, free: number[]): void {
  if (!result.exited || target.exitPublished || free.length !== 1 || result.exitCode === null) return;
  target.receive({ type: 'exited', seq: free.pop()!, exitCode: result.exitCode });
}
