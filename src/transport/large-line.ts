/**
 * Large lines without large copies. A 100 MiB `fs/writeFile` is a 133 MB
 * line; parsed the ordinary way it exists as the pieces read, the joined
 * line, its text, the parsed base64 string and the decoded bytes at once
 * (765 MiB of RSS growth, measured), and JSON.parse over a block's base64
 * costs more than moving it. Here the pieces as read are scanned for the one
 * big base64 value, the rest of the line is parsed as JSON, and the value is
 * decoded piece by piece straight into its bytes. In a server's request they
 * reach the method as a token (`protocol/payload-stash.ts`); in a client's
 * answer they take the member's place as a `Base64Payload`.
 *
 * Only compact lines of the requests and answers below take this path, and
 * only when the value is valid base64; anything else returns undefined and
 * goes the ordinary way, which also gives the exact error texts.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { lastSymbolError } from '../protocol/base64.js';
import { Base64Payload } from '../protocol/base64-payload.js';
import { randomHex } from '../protocol/random-ids.js';
import type { PayloadStash } from '../protocol/payload-stash.js';
import { duplicateKey, mayCarrySandbox } from './duplicate-keys.js';
import { isLexicallyPlain } from './lexical-checks.js';

/** Lines from this size on try this path. */
export const LARGE_LINE_BYTES = 1024 * 1024;
/**
 * The key must show up within this many bytes of the line's start: after an
 * HTTP answer's headers, which undici bounds at 16 KiB raw but which take
 * some 25 bytes more each as JSON (thousands of short ones reach 100 KB).
 */
const HEAD_LIMIT_BYTES = 1024 * 1024;
const OPEN_BRACE = 0x7b;
const COMMA = 0x2c;
const QUOTE = 0x22;
const MINUS = 0x2d;
const UNDERSCORE = 0x5f;

/** The requests whose one param may be huge base64. */
const LARGE_PARAMS: Record<string, string> = {
  'fs/writeFile': 'dataBase64',
  'process/write': 'chunk',
  'fs/writeBlock': 'chunk',
  'http/request': 'bodyBase64',
};
/** The result members of answers that may be huge base64 (`fs/readBlock`, `fs/readFile`, `http/request`). */
const ANSWER_MEMBERS = ['chunk', 'dataBase64', 'bodyBase64'];
const KEYS = [...new Set([...Object.values(LARGE_PARAMS), ...ANSWER_MEMBERS])].map((name) => ({ name, key: Buffer.from(`"${name}":"`) }));

type Message = { id?: unknown; method?: unknown; params?: Record<string, unknown>; result?: unknown };
/** The object in which a parsed message must hold the big value under `name` for the line to take this path. */
type HolderOf = (message: Message, name: string) => Record<string, unknown> | undefined;
/** Where the decoded bytes go: a buffer of exactly `size` bytes. */
type Allocate = (size: number) => Buffer;
type Found = { message: Message; holder: Record<string, unknown>; name: string; bytes: Buffer };

/** A server's request: the parsed message, its big param's bytes stashed; undefined leaves the line to the ordinary path. */
export function parseLargeLine(pieces: Buffer[], payloads: PayloadStash): unknown {
  const found = parseAround(
    pieces,
    (message, name) => (LARGE_PARAMS[message.method as string] === name ? message.params : undefined),
    (size) => payloads.lend(size),
  );
  if (!found) return undefined;
  found.holder[found.name] = payloads.stash(found.bytes);
  return found.message;
}

/**
 * A client's answer whose result holds a big base64 member: the parsed
 * message with that member as a `Base64Payload` of its bytes; undefined
 * leaves the line to the ordinary path.
 */
export function parseLargeAnswer(pieces: Buffer[]): unknown {
  const found = parseAround(
    pieces,
    (message, name) => {
      const isAnswer = message.id !== undefined && message.method === undefined && ANSWER_MEMBERS.includes(name);
      return isAnswer && typeof message.result === 'object' && message.result !== null
        ? (message.result as Record<string, unknown>)
        : undefined;
    },
    Buffer.allocUnsafe,
  );
  if (!found) return undefined;
  found.holder[found.name] = new Base64Payload(found.bytes);
  return found.message;
}

function parseAround(pieces: Buffer[], holderOf: HolderOf, allocate: Allocate): Found | undefined {
  const line = new Pieces(pieces);
  const head = line.slice(0, Math.min(line.length, HEAD_LIMIT_BYTES));
  for (const { name, key } of KEYS) {
    const at = head.indexOf(key);
    // After `{` or `,` the key is structural: inside a string its quotes would be escaped.
    if (at <= 0 || (head[at - 1] !== OPEN_BRACE && head[at - 1] !== COMMA)) continue;
    const start = at + key.length;
    const end = line.indexOfByte(QUOTE, start);
    if (end < 0 || end - start < LARGE_LINE_BYTES / 2) continue;
    // The value's place holds a fresh marker: the parsed message must have it
    // exactly where `holderOf` says, not nested deeper, elsewhere, or under a duplicate key.
    const marker = `\u0000large-value-${randomHex(8)}`;
    const message = parseWithout(line, start, end, marker);
    const holder = message && holderOf(message, name);
    if (holder?.[name] !== marker) return undefined;
    const bytes = decodeRegion(line, start, end, allocate);
    return bytes && { message: message!, holder, name, bytes };
  }
  return undefined;
}

/** The line parsed as JSON with bytes [start, end) replaced by `marker` (JSON-escaped). */
function parseWithout(line: Pieces, start: number, end: number, marker: string): Message | undefined {
  const escaped = JSON.stringify(marker).slice(1, -1);
  const rest = Buffer.concat([line.slice(0, start), Buffer.from(escaped), line.slice(end, line.length)]);
  if (!isUtf8(rest)) return undefined;
  const text = rest.toString('utf8');
  // A duplicate key is left to the ordinary path, which refuses such a line where it matters.
  if (mayCarrySandbox(text) && duplicateKey(text) !== undefined) return undefined;
  try {
    const message = JSON.parse(text) as Message;
    return isLexicallyPlain(message, text) ? message : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Strictly decodes the base64 in [start, end), piece by piece, straight into
 * the result; undefined if it is not valid. Buffer's decoder skips
 * characters outside the alphabet and stops at `=`, so any junk or early
 * padding decodes to fewer bytes than the text's length promises, which is
 * checked per piece; the URL-safe `-` and `_`, which it accepts, are looked
 * for in the bytes.
 */
function decodeRegion(line: Pieces, start: number, end: number, allocate: Allocate): Buffer | undefined {
  const length = end - start;
  if (length % 4 !== 0) return undefined;
  const lastGroup = line.slice(end - 4, end).toString('latin1');
  if (lastSymbolError(lastGroup) !== undefined) return undefined;
  const padding = lastGroup.endsWith('==') ? 2 : lastGroup.endsWith('=') ? 1 : 0;
  const bytes = allocate((length / 4) * 3 - padding);
  let written = 0;
  let decodedUpTo = start;
  /** Decodes `text` (whole groups ending at `upTo`) into `bytes`; false if it held anything but base64. */
  const decode = (text: string, upTo: number): boolean => {
    const expected = (text.length / 4) * 3 - (upTo === end ? padding : 0);
    const count = bytes.write(text, written, 'base64');
    written += count;
    decodedUpTo = upTo;
    return count === expected;
  };
  let carry = '';
  for (const [segmentStart, segment] of windows(line.segments(start, end))) {
    if (!isAscii(segment) || segment.includes(MINUS) || segment.includes(UNDERSCORE)) return undefined;
    // A group cut between pieces is finished from the head of this one.
    const head = Math.min((4 - carry.length) % 4, segment.length);
    if (head > 0) {
      carry += segment.toString('latin1', 0, head);
      if (carry.length === 4 && !decode(carry, segmentStart + head)) return undefined;
      if (carry.length === 4) carry = '';
    }
    const whole = head + Math.floor((segment.length - head) / 4) * 4;
    if (whole > head && !decode(segment.toString('latin1', head, whole), segmentStart + whole)) return undefined;
    if (whole < segment.length) carry = segment.toString('latin1', whole);
  }
  return decodedUpTo === end && written === bytes.length ? bytes : undefined;
}

/** Each piece is made a string to be decoded: at most this many bytes at a time (a WebSocket message is one piece). */
const DECODE_WINDOW_BYTES = 4 * 1024 * 1024;

/** `segments` cut into windows of at most DECODE_WINDOW_BYTES, offsets kept. */
function* windows(segments: Iterable<[number, Buffer]>): Generator<[number, Buffer]> {
  for (const [at, segment] of segments) {
    for (let offset = 0; offset < segment.length; offset += DECODE_WINDOW_BYTES) {
      yield [at + offset, segment.subarray(offset, offset + DECODE_WINDOW_BYTES)];
    }
  }
}

/** A line held as the pieces it was read in, addressed by offset in the whole line. */
class Pieces {
  readonly length: number;
  private readonly starts: number[] = [];

  constructor(private readonly pieces: Buffer[]) {
    let offset = 0;
    for (const piece of pieces) {
      this.starts.push(offset);
      offset += piece.length;
    }
    this.length = offset;
  }

  /** The parts of the pieces that hold bytes [start, end), in order, each with its offset in the line. */
  *segments(start: number, end: number): Generator<[number, Buffer]> {
    for (let i = this.pieceAt(start); i < this.pieces.length && this.starts[i]! < end; i++) {
      const from = Math.max(start - this.starts[i]!, 0);
      const to = Math.min(end - this.starts[i]!, this.pieces[i]!.length);
      yield [this.starts[i]! + from, this.pieces[i]!.subarray(from, to)];
    }
  }

  /** Bytes [start, end) as one buffer (for the small parts of the line). */
  slice(start: number, end: number): Buffer {
    return Buffer.concat([...this.segments(start, end)].map(([, segment]) => segment));
  }

  indexOfByte(byte: number, from: number): number {
    for (let i = this.pieceAt(from); i < this.pieces.length; i++) {
      const found = this.pieces[i]!.indexOf(byte, Math.max(from - this.starts[i]!, 0));
      if (found >= 0) return this.starts[i]! + found;
    }
    return -1;
  }

  private pieceAt(offset: number): number {
    let low = 0;
    let high = this.pieces.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >>> 1;
      if (this.starts[mid]! <= offset) low = mid;
      else high = mid - 1;
    }
    return low;
  }
}
