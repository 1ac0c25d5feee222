/**
 * Reads a `process/output` line straight from its bytes, without turning the
 * whole line into a string and parsing it: the chunk is most of the line and
 * JSON.parse would copy it twice more (GC was a quarter of the client's CPU).
 *
 * Only the exact shape the servers write is recognised:
 *   {"method":"process/output","params":{"processId":"…","seq":N,"stream":"…","chunk":"…"}}
 * Anything else (other key order, escapes in the id) returns undefined and
 * takes the ordinary JSON path.
 */
import type { OutputStream } from '../protocol/types.js';

const PREFIX = Buffer.from('{"method":"process/output","params":{"processId":"');
const SEQ = Buffer.from('","seq":');
const STREAM = Buffer.from(',"stream":"');
const CHUNK = Buffer.from('","chunk":"');
const END = Buffer.from('"}}');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export interface FastOutput {
  processId: string;
  seq: number;
  stream: OutputStream;
  chunk: Buffer;
}

function startsAt(line: Buffer, at: number, expected: Buffer): boolean {
  return line.length >= at + expected.length && line.compare(expected, 0, expected.length, at, at + expected.length) === 0;
}

export function parseOutputLine(line: Buffer): FastOutput | undefined {
  if (!startsAt(line, 0, PREFIX)) return undefined;
  const idStart = PREFIX.length;
  const idEnd = line.indexOf(QUOTE, idStart);
  if (idEnd < 0 || line.subarray(idStart, idEnd).includes(BACKSLASH) || !startsAt(line, idEnd, SEQ)) return undefined;
  let at = idEnd + SEQ.length;
  let seq = 0;
  const digitsStart = at;
  while (at < line.length && line[at]! >= 0x30 && line[at]! <= 0x39) seq = seq * 10 + (line[at++]! - 0x30);
  if (at === digitsStart || !startsAt(line, at, STREAM)) return undefined;
  const streamStart = at + STREAM.length;
  const streamEnd = line.indexOf(QUOTE, streamStart);
  if (streamEnd < 0 || !startsAt(line, streamEnd, CHUNK)) return undefined;
  const stream = line.toString('latin1', streamStart, streamEnd);
  if (stream !== 'stdout' && stream !== 'stderr' && stream !== 'pty') return undefined;
  const chunkStart = streamEnd + CHUNK.length;
  const chunkEnd = line.length - END.length;
  if (chunkEnd < chunkStart || !startsAt(line, chunkEnd, END) || line.indexOf(QUOTE, chunkStart) !== chunkEnd) return undefined;
  return {
    processId: line.toString('utf8', idStart, idEnd),
    seq,
    stream,
    chunk: Buffer.from(line.toString('latin1', chunkStart, chunkEnd), 'base64'),
  };
}
