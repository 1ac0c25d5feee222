/**
 * Reading the server's lines without JSON.parse where it would cost the
 * benchmark driver more than the server spends (see driver.mjs): the keys it
 * looks for, base64 lengths, and large answers parsed without their chunk.
 */
export const OUTPUT_PREFIX = Buffer.from('{"method":"process/output"');
export const CHUNK_KEY = Buffer.from('"chunk":"');
export const ID_KEY = Buffer.from('"processId":"');
export const QUOTE = 0x22;
export const NEWLINE = 0x0a;
export const PAD = 0x3d;

export function base64Length(bytes, start, end) {
  let padding = 0;
  if (bytes[end - 1] === PAD) padding++;
  if (bytes[end - 2] === PAD) padding++;
  return ((end - start) / 4) * 3 - padding;
}

/** Answers from this size on are parsed without their `chunk` (`parseLargeAnswer`). */
export const LARGE_ANSWER_BYTES = 64 * 1024;
export const HEAD_BYTES = 256;

/**
 * An answer carrying a large base64 `chunk` (`fs/readBlock`): the rest of the
 * line is parsed as JSON, the chunk is kept as the bytes received, still
 * base64, in `result.chunkBase64` (base64 holds no JSON escapes). A
 * JSON.parse of the whole line, or decoding it, would cost the driver more
 * than the server spends making it: the driver would measure itself. (An
 * answer with a chunk sink, `requestStreamed`, is not even joined.)
 */
export function parseLargeAnswer(line) {
  const key = line.subarray(0, HEAD_BYTES).indexOf(CHUNK_KEY);
  if (key < 0) return JSON.parse(line.toString('utf8'));
  const start = key + CHUNK_KEY.length;
  const end = line.indexOf(QUOTE, start);
  const message = JSON.parse(line.toString('utf8', 0, start) + line.toString('utf8', end));
  // Only an answer's chunk is kept aside; a notification is parsed whole.
  if (message.result === undefined) return JSON.parse(line.toString('utf8'));
  message.result.chunkBase64 = line.subarray(start, end);
  return message;
}
