/**
 * A WebSocket as the pair of byte streams the line transport reads and
 * writes: one JSON-RPC message per text frame on the wire, one per line in
 * the streams. Compact JSON has no raw newline, so each line written becomes
 * one message; a message read becomes one line (see `asLine` for its raw line
 * breaks). Both ways stay
 * bytes: a message can be longer than V8's longest string (a 716 MB
 * `fs/readFile` answer), and a line written in slices (a streamed payload)
 * goes out as the fragments of one message, never joined here.
 */
import { PassThrough, Writable } from 'node:stream';
import type { RawData, WebSocket } from 'ws';
import { copiesWrites } from './line-writer.js';

export interface WebSocketStreams {
  /** The messages the peer sends, as lines. */
  input: PassThrough;
  /** Lines written here go to the peer, one text message each. */
  output: Writable;
  /** How many bytes of the output the socket has taken so far (it takes more only as the peer reads). */
  sentBytes(): number;
}

/** ws keeps its limits as 32-bit integers: from 2^31 on, a limit becomes none at all. */
const WS_LARGEST_LIMIT = 2 ** 31 - 1;

/**
 * ws's limits for messages of at most `maxBytes`. Fragments: ws refuses more
 * than 16,384 by default, which a line sent as its 64 KiB slices of base64
 * passes at about 1 GiB (768 MiB of payload); one per KiB is still bounded
 * (a message of a million tiny fragments is refused).
 */
export function webSocketLimits(maxBytes: number): { maxPayload: number; maxFragments: number } {
  const maxPayload = Math.min(maxBytes, WS_LARGEST_LIMIT);
  return { maxPayload, maxFragments: Math.ceil(maxPayload / 1024) };
}

/** Close code for a binary frame (1003: unsupported data). */
const CLOSE_UNSUPPORTED_DATA = 1003;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** The unit separator: a control character, which JSON refuses inside a string as it refuses a raw line break. */
const CONTROL_IN_STRING = 0x1f;
const LINE_END = Buffer.from('\n');

/** The pieces of `bytes` to send, each with whether it ends its message (a line's end). */
function fragments(bytes: Buffer): Array<[Buffer, boolean]> {
  const pieces: Array<[Buffer, boolean]> = [];
  let start = 0;
  for (let newline = bytes.indexOf(NEWLINE); newline !== -1; newline = bytes.indexOf(NEWLINE, start)) {
    pieces.push([bytes.subarray(start, newline), true]);
    start = newline + 1;
  }
  if (start < bytes.length) pieces.push([bytes.subarray(start), false]);
  return pieces;
}

/**
 * A received message as one buffer (edited in place: it is ours now) with no raw line break left:
 * one between tokens becomes a space; one inside a string becomes 0x1F, still a control
 * character, so that the message is refused as over stdio, never read with its text changed.
 */
function asLine(data: RawData): Buffer {
  const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
  if (bytes.indexOf(NEWLINE) === -1 && bytes.indexOf(CARRIAGE_RETURN) === -1) return bytes;
  const isBreak = (at: number) => bytes[at] === NEWLINE || bytes[at] === CARRIAGE_RETURN;
  let inString = false;
  for (let at = 0; at < bytes.length; at++) {
    const byte = bytes[at];
    if (!inString) {
      if (byte === QUOTE) inString = true;
      else if (isBreak(at)) bytes[at] = SPACE;
    } else if (byte === QUOTE) {
      inString = false;
    } else {
      if (byte === BACKSLASH) at++; // the escaped byte: no quote, and a break there is refused too
      if (at < bytes.length && isBreak(at)) bytes[at] = CONTROL_IN_STRING;
    }
  }
  return bytes;
}

export interface WebSocketStreamOptions {
  /**
   * Hears the close code before the streams end (a listener tells a clean close, 1000, from a
   * dropped connection). A connection ws closed for a protocol error (an invalid or over-size
   * frame) reports 1002 even when the peer never echoed the close (ws then says 1006).
   */
  onClose?: (code: number) => void;
}

/** Close code for a frame that breaks the protocol (1002). */
const CLOSE_PROTOCOL_ERROR = 1002;

export function webSocketStreams(socket: WebSocket, options: WebSocketStreamOptions = {}): WebSocketStreams {
  const input = new PassThrough();
  let sent = 0;
  // A write calls back once ws has sent what it took from the chunk: its buffer may then be reused.
  const output = copiesWrites(
    new Writable({
      decodeStrings: false,
      write(chunk: Buffer | string, encoding, callback) {
        // A socket that is closing takes nothing more, and 'close' is on its way: what the peer can no
        // longer get is dropped without an error, so that the server hears of the drop from 'close'
        // (and keeps the session for a resume) rather than from a failed write (which ends it).
        if (socket.readyState !== socket.OPEN) return callback();
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk;
        const pieces = fragments(bytes);
        if (pieces.length === 0) return callback();
        let left = pieces.length;
        for (const [piece, fin] of pieces) {
          socket.send(piece, { binary: false, fin }, () => {
            sent += piece.length;
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
  let paused = false;
  let brokeProtocol = false;
  const resume = () => {
    paused = false;
    socket.resume();
  };
  socket.on('message', (data, isBinary) => {
    if (isBinary) {
      brokeProtocol = true; // ended for it, whether or not the peer echoes the close
      socket.close(CLOSE_UNSUPPORTED_DATA, 'exec-server takes text frames, one JSON-RPC message each');
      return;
    }
    // While the reader is behind, the socket is not read either: what the peer sends then backs up
    // into TCP, not into this process's memory (a server's reader stops while its client does not
    // read the answers; a client's while its consumer is behind). Liveness makes allowance for a
    // paused socket, whose peer's pings wait unanswered (`websocket-liveness.ts`).
    input.write(asLine(data));
    if (input.write(LINE_END) || paused) return;
    paused = true;
    socket.pause();
    input.once('drain', resume);
  });
  socket.on('close', (code) => {
    options.onClose?.(brokeProtocol && code === 1006 ? CLOSE_PROTOCOL_ERROR : code);
    input.end();
    output.destroy();
  });
  // ws's own errors name a frame it refused (and it closes the connection with their code); any
  // other error surfaces as 'close'.
  socket.on('error', (error: Error & { code?: string }) => {
    if (error.code?.startsWith('WS_ERR_')) brokeProtocol = true;
  });
  return { input, output, sentBytes: () => sent };
}
