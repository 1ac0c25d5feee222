/**
 * A buffered response body, read whole. undici's `arrayBuffer()` keeps every
 * chunk to the end and then copies them into one buffer: twice the body in
 * memory at the peak, and the copy made only once the last byte is in. When
 * the response declares its length, each chunk is copied into one buffer of
 * that length as it arrives instead (once enough has come to believe the
 * length), and is garbage from then on.
 */
import type { Dispatcher } from 'undici';

type Body = Dispatcher.ResponseData['body'];

/** A declared length above this is not trusted at all (the chunks are kept and joined at the end). */
const PREALLOCATE_LIMIT = 1024 * 1024 * 1024;
/**
 * The buffer of the declared length is made only once this much has come
 * (or all of it): any server can declare a gigabyte and send a byte. What
 * came before is copied in then.
 */
const TRUSTED_AFTER_BYTES = 64 * 1024 * 1024;

/** The length a `content-length` header declares, if it is one plain number. */
function declaredLength(header: string | string[] | undefined): number | undefined {
  if (typeof header !== 'string' || !/^\d{1,10}$/.test(header)) return undefined;
  const length = Number(header);
  return length <= PREALLOCATE_LIMIT ? length : undefined;
}

/**
 * A 204 or 304 answer has no body, whatever its content-length says (RFC 9110
 * §8.6): undici counts the declared bytes all the same and fails the body.
 * The reference answers such a response, with an empty body.
 */
export function isBodilessLengthMismatch(status: number, error: unknown): boolean {
  return (status === 204 || status === 304) && (error as { code?: string }).code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH';
}

/**
 * Told how many bytes were just taken (0 before the first chunk); resolves
 * when the next chunk may be taken: the connection has room for answers (see
 * `AnswerBudget.whenRoom`) and its client is reading. A body waiting here is
 * not read, and undici stops reading its socket.
 */
export type Room = (taken: number) => Promise<void>;

/**
 * Reads `body` to its end, taking each chunk once there is `room`. The buffer
 * is made when the first chunk comes (a HEAD answer declares a length and
 * sends nothing); bytes beyond the declared length, which undici would not
 * pass on anyway, are kept too.
 */
export async function readWholeBody(body: Body, status: number, contentLength: string | string[] | undefined, room: Room): Promise<Buffer> {
  try {
    await room(0);
    return await readDeclared(body, contentLength, room);
  } catch (error) {
    if (isBodilessLengthMismatch(status, error)) return Buffer.alloc(0);
    throw error;
  }
}

async function readUndeclared(body: Body, room: Room): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    await room(chunk.length); // before the loop takes the next
  }
  return Buffer.concat(chunks);
}

async function readDeclared(body: Body, contentLength: string | string[] | undefined, room: Room): Promise<Buffer> {
  const length = declaredLength(contentLength);
  if (length === undefined) return readUndeclared(body, room);
  let whole: Buffer | undefined;
  let filled = 0;
  const early: Buffer[] = [];
  let earlyBytes = 0;
  const beyond: Buffer[] = [];
  const copyIn = (chunk: Buffer) => {
    const fits = Math.min(chunk.length, length - filled);
    chunk.copy(whole!, filled, 0, fits);
    filled += fits;
    if (fits < chunk.length) beyond.push(chunk.subarray(fits));
  };
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (whole) copyIn(chunk);
    else {
      early.push(chunk);
      earlyBytes += chunk.length;
      if (earlyBytes >= Math.min(length, TRUSTED_AFTER_BYTES)) {
        whole = Buffer.allocUnsafe(length);
        for (const piece of early.splice(0)) copyIn(piece);
      }
    }
    await room(chunk.length); // before the loop takes the next
  }
  if (!whole) return Buffer.concat(early); // ended short of the length it declared, or empty (a HEAD answer)
  const read = whole.subarray(0, filled);
  return beyond.length === 0 ? read : Buffer.concat([read, ...beyond]);
}
