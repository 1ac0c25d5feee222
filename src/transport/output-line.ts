/**
 * The hot message of the protocol, `process/output`, in one fixed shape:
 *   {"method":"process/output","params":{"processId":"…","seq":N,"stream":"…","chunk":"<base64>"}}
 * The server writes it straight into a Buffer (JSON.stringify would scan
 * every base64 character, and a string would be re-encoded); the client
 * reads it straight from the bytes (JSON.parse would copy the chunk twice).
 * Both sides live here so that the shape is defined once.
 */
import { isUtf8 } from 'node:buffer';
import { lastSymbolError } from '../protocol/base64.js';
import type { OutputStream } from '../protocol/types.js';

const PREFIX = Buffer.from('{"method":"process/output","params":{"processId":');
const SEQ = Buffer.from(',"seq":');
const STREAM = Buffer.from(',"stream":"');
const CHUNK = Buffer.from('","chunk":"');
const END = Buffer.from('"}}');
const NEWLINE = Buffer.from('\n');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const UNDERSCORE = 0x5f;
/** Symbols Buffer's decoder takes that standard base64 has not (made once: this runs per output line). */
const URL_SAFE = [MINUS, UNDERSCORE];

export interface OutputLine {
  processId: string;
  seq: number;
  stream: OutputStream;
  chunk: Buffer;
}

/** Everything between the prefix and the base64 chunk. */
function headOf(processId: string, seq: number, stream: OutputStream): string {
  return `${JSON.stringify(processId)},"seq":${seq},"stream":"${stream}","chunk":"`;
}

/** The line's length in bytes, newline included. */
function lineLength(head: string, byteCount: number): number {
  return PREFIX.length + Buffer.byteLength(head) + Math.ceil(byteCount / 3) * 4 + END.length + NEWLINE.length;
}

/** Writes the line into `line` (exactly `lineLength` bytes). */
function writeLine(line: Buffer, head: string, bytes: Buffer): void {
  let offset = PREFIX.copy(line, 0);
  offset += line.write(head, offset, 'utf8');
  offset += line.write(bytes.toString('base64'), offset, 'latin1');
  offset += END.copy(line, offset);
  NEWLINE.copy(line, offset);
}

/**
 * The whole line, newline included, in a buffer from `allocate` (the server
 * reuses its line buffers: in a micro-benchmark a fresh 87 KB buffer per
 * 64 KiB chunk cost as much as the encoding itself).
 */
export function encodeOutputLine(
  processId: string,
  seq: number,
  stream: OutputStream,
  bytes: Buffer,
  allocate: (size: number) => Buffer = Buffer.allocUnsafe,
): Buffer {
  const head = headOf(processId, seq, stream);
  const line = allocate(lineLength(head, bytes.length));
  writeLine(line, head, bytes);
  return line;
}

function startsAt(line: Buffer, at: number, expected: Buffer): boolean {
  return line.length >= at + expected.length && line.compare(expected, 0, expected.length, at, at + expected.length) === 0;
}

/**
 * Parses a line (without its newline) of exactly the shape above; any other
 * valid JSON (other key order, escapes in the id) returns undefined and
 * should take the ordinary JSON path.
 */
export function decodeOutputLine(line: Buffer): OutputLine | undefined {
  if (!startsAt(line, 0, PREFIX) || line[PREFIX.length] !== QUOTE) return undefined;
  const idStart = PREFIX.length + 1;
  const idEnd = line.indexOf(QUOTE, idStart);
  if (idEnd < 0 || line.subarray(idStart, idEnd).includes(BACKSLASH) || !startsAt(line, idEnd + 1, SEQ)) return undefined;
  let at = idEnd + 1 + SEQ.length;
  let seq = 0;
  const digitsStart = at;
  // A seq counts from 1, written without leading zeros: anything else takes the checking path.
  if (line[at] === 0x30) return undefined;
  while (at < line.length && line[at]! >= 0x30 && line[at]! <= 0x39) seq = seq * 10 + (line[at++]! - 0x30);
  // A seq past 2^53 - 1 is not exact as a number: left to the checking path too.
  if (at === digitsStart || at - digitsStart > 16 || seq > Number.MAX_SAFE_INTEGER || !startsAt(line, at, STREAM)) return undefined;
  const streamStart = at + STREAM.length;
  const streamEnd = line.indexOf(QUOTE, streamStart);
  if (streamEnd < 0 || !startsAt(line, streamEnd, CHUNK)) return undefined;
  const stream = line.toString('latin1', streamStart, streamEnd);
  if (stream !== 'stdout' && stream !== 'stderr' && stream !== 'pty') return undefined;
  const chunkStart = streamEnd + CHUNK.length;
  const chunkEnd = line.length - END.length;
  if (chunkEnd < chunkStart || !startsAt(line, chunkEnd, END) || line.indexOf(QUOTE, chunkStart) !== chunkEnd) return undefined;
  // Anything doubtful (an id that is not UTF-8, a chunk that is not canonical base64) is the checking path's to refuse.
  if (!isUtf8(line.subarray(idStart, idEnd))) return undefined;
  const chunk = canonicalChunk(line, chunkStart, chunkEnd);
  if (!chunk) return undefined;
  return { processId: line.toString('utf8', idStart, idEnd), seq, stream, chunk };
}

/**
 * The bytes of [start, end) of `line` if it is canonical base64, else undefined; checked on the
 * bytes, which costs less than `decodeBase64` on the text. Buffer's decoder skips what is not in
 * its alphabet (a shorter result shows it) but takes the URL-safe `-` and `_` (looked for here).
 */
function canonicalChunk(line: Buffer, start: number, end: number): Buffer | undefined {
  const length = end - start;
  if (length % 4 !== 0) return undefined;
  const text = line.toString('latin1', start, end);
  if (length > 0 && lastSymbolError(text.slice(-4)) !== undefined) return undefined;
  for (const urlSafe of URL_SAFE) {
    const at = line.indexOf(urlSafe, start);
    if (at !== -1 && at < end) return undefined;
  }
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === (length / 4) * 3 - padding ? bytes : undefined;
}
