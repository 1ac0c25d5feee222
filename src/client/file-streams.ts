/**
 * Files as Node streams over the block methods (generation 2): `fs/open`,
 * then `fs/readBlock` or `fs/writeBlock` in blocks of at most 1 MiB, then
 * `fs/close`. A few blocks are in flight at once, and no more: memory stays
 * bounded and backpressure reaches the server.
 */
import { randomHex } from '../protocol/random-ids.js';
import { Readable, Writable } from 'node:stream';
import { Base64Payload, bytesOf } from '../protocol/base64-payload.js';
import type { MethodName, ProducedResultOf, SentParamsOf } from '../protocol/methods.js';
import { MAX_BLOCK_BYTES } from '../protocol/defaults.js';

/** The largest block the protocol allows. */
export { MAX_BLOCK_BYTES };
const IN_FLIGHT = 4;

export type Call = <M extends MethodName>(method: M, params: SentParamsOf<M>) => Promise<ProducedResultOf<M>>;

export interface FileStreamOptions {
  /** Bytes per request, at most 1 MiB (the default). */
  blockSize?: number;
}

function blockSizeOf(options: FileStreamOptions): number {
  const size = options.blockSize ?? MAX_BLOCK_BYTES;
  if (!Number.isInteger(size) || size < 1 || size > MAX_BLOCK_BYTES)
    throw new RangeError(`blockSize must be between 1 and ${MAX_BLOCK_BYTES}, got ${size}`);
  return size;
}

/** Starts a request whose failure is awaited later: no unhandled rejection meanwhile. */
function started<T>(request: Promise<T>): Promise<T> {
  request.catch(() => undefined);
  return request;
}

/** A Readable of the file at `path` (as the server wants paths). */
export function blockReader(call: Call, path: string, options: FileStreamOptions = {}): Readable {
  const blockSize = blockSizeOf(options);
  const handleId = newHandleId();
  let opened = false;
  let offset = 0;
  let ended = false;
  let delivering = false;
  const pending: Array<Promise<ProducedResultOf<'fs/readBlock'>>> = [];
  const stream: Readable = new Readable({
    highWaterMark: blockSize * IN_FLIGHT,
    construct(callback) {
      call('fs/open', { handleId, path, mode: 'read' }).then(() => {
        opened = true;
        callback();
      }, callback);
    },
    read() {
      void deliver();
    },
    destroy(error, callback) {
      closeQuietly(opened, handleId, call).then(() => callback(error));
    },
  });
  /** Pushes blocks in file order, keeping IN_FLIGHT reads ahead, until the stream has enough. */
  async function deliver(): Promise<void> {
    if (delivering) return;
    delivering = true;
    try {
      while (!ended) {
        while (pending.length < IN_FLIGHT) {
          pending.push(started(call('fs/readBlock', { handleId, offset, len: blockSize })));
          offset += blockSize;
        }
        const { chunk, eof } = await pending.shift()!;
        const bytes = bytesOf(chunk);
        const wantsMore = bytes.length === 0 || stream.push(bytes);
        if (eof) {
          ended = true;
          pending.length = 0; // reads past the end answer empty: nothing to wait for
          stream.push(null);
        }
        if (!wantsMore) break;
      }
    } catch (error) {
      stream.destroy(error as Error);
    } finally {
      delivering = false;
    }
  }
  return stream;
}

/** A Writable that replaces the file at `path` (truncated when opened, as `fs/open` mode replace does). */
export function blockWriter(call: Call, path: string, options: FileStreamOptions = {}): Writable {
  const blockSize = blockSizeOf(options);
  const handleId = newHandleId();
  let opened = false;
  let destroyed = false;
  let offset = 0;
  const pending: Array<Promise<unknown>> = [];
  const send = async (bytes: Buffer) => {
    // A destroyed stream sends no more blocks: only those already on their way land.
    for (let start = 0; start < bytes.length && !destroyed; start += blockSize) {
      const block = bytes.subarray(start, start + blockSize);
      // A copy: the caller may reuse its buffer once the write is called back, while this block may still be on its way.
      pending.push(started(call('fs/writeBlock', { handleId, offset, chunk: new Base64Payload(Buffer.from(block)) })));
      offset += block.length;
      if (pending.length >= IN_FLIGHT) await pending.shift();
    }
  };
  return new Writable({
    highWaterMark: blockSize,
    construct(callback) {
      call('fs/open', { handleId, path, mode: 'replace' }).then(() => {
        opened = true;
        callback();
      }, callback);
    },
    write(chunk: Buffer, _encoding, callback) {
      send(chunk).then(() => callback(), callback);
    },
    // Small writes that piled up while blocks were on their way go out together, in full blocks,
    // not one request each.
    writev(chunks, callback) {
      send(Buffer.concat(chunks.map(({ chunk }) => chunk as Buffer))).then(() => callback(), callback);
    },
    final(callback) {
      Promise.all(pending.splice(0))
        .then(() => call('fs/close', { handleId }))
        .then(() => {
          opened = false;
          callback();
        }, callback);
    },
    destroy(error, callback) {
      destroyed = true;
      Promise.allSettled(pending.splice(0))
        .then(() => closeQuietly(opened, handleId, call))
        .then(() => callback(error));
    },
  });
}

/**
 * Closes the handle of a stream being destroyed. The server answers
 * `fs/close` with `{}` whatever the handle, so it fails only when the
 * connection is gone, and the handle with it: nothing the stream's user
 * must hear of (a reader that ended, then its client closed, would emit
 * 'error' after 'end').
 */
function closeQuietly(opened: boolean, handleId: string, call: Call): Promise<void> {
  return opened
    ? call('fs/close', { handleId }).then(
        () => undefined,
        () => undefined,
      )
    : Promise.resolve();
}

/** 32 hex digits: as long as a handle id may be (Codex 0.169 refuses longer ones). */
function newHandleId(): string {
  return randomHex(16);
}
