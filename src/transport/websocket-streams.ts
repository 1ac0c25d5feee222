/**
 * A WebSocket as the pair of byte streams the line transport reads and
 * writes: one JSON-RPC message per text frame on the wire, one per line in
 * the streams. Compact JSON has no raw newline, so each line written becomes
 * one frame; a frame read becomes one line (raw line breaks in it, which
 * only whitespace between tokens can be, become spaces).
 */
import { PassThrough, Writable } from 'node:stream';
import type { WebSocket } from 'ws';
import { copiesWrites } from './line-writer.js';

export interface WebSocketStreams {
  /** The messages the peer sends, as lines. */
  input: PassThrough;
  /** Lines written here go to the peer, one text frame each. */
  output: Writable;
}

/** Close code for a binary frame (1003: unsupported data). */
const CLOSE_UNSUPPORTED_DATA = 1003;

/**
 * `onClose` hears the close code before the streams end (a listener tells a
 * clean close, 1000, from a dropped connection).
 */
export function webSocketStreams(socket: WebSocket, onClose?: (code: number) => void): WebSocketStreams {
  const input = new PassThrough();
  // The start of a line written in slices (a streamed payload): kept as the slices, joined once
  // when its newline comes, so that each slice is looked at once.
  let pending: string[] = [];
  // Each chunk becomes a string before the write calls back: its buffer may be reused.
  const output = copiesWrites(
    new Writable({
      decodeStrings: false,
      write(chunk: Buffer | string, _encoding, callback) {
        const text = chunk.toString();
        const lines = text.split('\n');
        const rest = lines.pop()!;
        if (lines.length > 0) {
          lines[0] = pending.join('') + lines[0];
          pending = [];
        }
        if (rest.length > 0) pending.push(rest);
        // A socket that is closing takes nothing more, and 'close' is on its way: what the peer can no
        // longer get is dropped without an error, so that the server hears of the drop from 'close'
        // (and keeps the session for a resume) rather than from a failed write (which ends it).
        if (lines.length === 0 || socket.readyState !== socket.OPEN) return callback();
        let left = lines.length;
        for (const line of lines) {
          socket.send(line, () => {
            if (--left === 0) callback();
          });
        }
      },
      final(callback) {
        socket.close(1000);
        callback();
      },
    }),
  );
  socket.on('message', (data, isBinary) => {
    if (isBinary) {
      socket.close(CLOSE_UNSUPPORTED_DATA, 'exec-server takes text frames, one JSON-RPC message each');
      return;
    }
    input.write(`${data.toString().replace(/[\r\n]/g, ' ')}\n`);
  });
  socket.on('close', (code) => {
    onClose?.(code);
    input.end();
    output.destroy();
  });
  socket.on('error', () => undefined); // surfaces as 'close'
  return { input, output };
}
