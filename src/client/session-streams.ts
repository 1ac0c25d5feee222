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

/** How often a full stream is looked at for whether anything still reads it. */
const READER_CHECK_MS = 100;

/** Whether anything reads `stream`: a pipe, a `'data'` or `'readable'` listener (an iterator). */
const isRead = (stream: PassThrough): boolean =>
  stream.readableFlowing === true || stream.listenerCount('data') > 0 || stream.listenerCount('readable') > 0;

/**
 * Writes into a stream, holding back the server's output while a stream that
 * is read (piped, flowing, iterated) is full, until it drains. A stream
 * nobody reads holds nothing back: it keeps what it is given, as before; so
 * does one that stops being read while full (unpiped), and a destroyed one
 * (an iteration left early) is given nothing more.
 */
function backpressured(hold: () => () => void): { write: (stream: PassThrough, chunk: Buffer) => void; releaseAll: () => void } {
  const held = new Map<PassThrough, () => void>();
  const write = (stream: PassThrough, chunk: Buffer) => {
    if (stream.destroyed) return;
    if (stream.write(chunk) || stream.readableFlowing === null || held.has(stream) || !isRead(stream)) return;
    const release = hold();
    // Its last reader may go (an unpipe): no event says so, so it is looked for while held.
    const readerGone = setInterval(() => !isRead(stream) && done(), READER_CHECK_MS).unref();
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
