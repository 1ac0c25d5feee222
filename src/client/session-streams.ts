/**
 * A session's output as two Node streams, stdout (with a PTY's output) and
 * stderr, fed by one consumer of its events: made together, so that output
 * that came before either was asked for goes to each.
 */
import { PassThrough } from 'node:stream';
import { ClientErrors } from './errors.js';
import type { ProcessEvent } from './process-event.js';

export interface OutputStreams {
  stdout: PassThrough;
  stderr: PassThrough;
}

/**
 * The streams and the consumer that feeds them. A failure errors a stream
 * that has an `'error'` listener (`pipeline`, `for await`) and ends one that
 * has none (`pipe`), whose error would otherwise bring down the whole
 * process; the session reports the failure either way.
 */
export function outputStreams(hold: () => () => void): { streams: OutputStreams; consumer: (event: ProcessEvent) => void } {
  const streams = { stdout: new PassThrough(), stderr: new PassThrough() };
  const { write, releaseAll } = backpressured(hold);
  const consumer = (event: ProcessEvent) => {
    if (event.type === 'output') {
      write(streams[event.stream === 'stderr' ? 'stderr' : 'stdout'], event.chunk);
      return;
    }
    // The last event: everything has come, there is nothing left to hold back.
    if (event.type === 'closed' || event.type === 'failed') releaseAll();
    if (event.type === 'closed') {
      for (const stream of Object.values(streams)) stream.end();
    } else if (event.type === 'failed') {
      for (const stream of Object.values(streams)) {
        if (stream.listenerCount('error') > 0) stream.destroy(ClientErrors.cutOff(event.message));
        else stream.end();
      }
    }
  };
  return { streams, consumer };
}

/** How often a full stream that was piped is looked at for whether it still is. */
const READER_CHECK_MS = 100;

/** How many destinations `stream` is piped to (Node keeps them in its readable state). */
const pipeCount = (stream: PassThrough): number =>
  (stream as unknown as { _readableState?: { pipes?: unknown[] } })._readableState?.pipes?.length ?? 0;

/**
 * Writes into a stream, holding back the server's output while a stream that
 * is read (piped, flowing, iterated, read in paused mode) is full, until it
 * drains. A stream nobody reads holds nothing back: it keeps what it is
 * given, as before; so does one unpiped from its last destination with no
 * other reader (no event says so: a held stream that was piped is looked at
 * every READER_CHECK_MS), and a destroyed one (an iteration left early) is
 * given nothing more.
 */
function backpressured(hold: () => () => void): { write: (stream: PassThrough, chunk: Buffer) => void; releaseAll: () => void } {
  const held = new Map<PassThrough, () => void>();
  const wasPiped = new WeakSet<PassThrough>();
  /** Piped once, and now neither piped nor listened to: its reader left. */
  const left = (stream: PassThrough): boolean => {
    if (pipeCount(stream) > 0) wasPiped.add(stream);
    const listened = stream.listenerCount('data') > 0 || stream.listenerCount('readable') > 0;
    return wasPiped.has(stream) && pipeCount(stream) === 0 && !listened;
  };
  const write = (stream: PassThrough, chunk: Buffer) => {
    if (stream.destroyed) return;
    if (stream.write(chunk) || stream.readableFlowing === null || held.has(stream) || left(stream)) return;
    const release = hold();
    const readerGone = wasPiped.has(stream) ? setInterval(() => left(stream) && done(), READER_CHECK_MS).unref() : undefined;
    const done = () => {
      if (held.get(stream) !== done) return; // released already
      held.delete(stream);
      clearInterval(readerGone);
      stream.off('drain', done).off('close', done);
      release();
    };
    held.set(stream, done);
    stream.once('drain', done).once('close', done);
  };
  const releaseAll = () => {
    for (const done of [...held.values()]) done();
  };
  return { write, releaseAll };
}
