/**
 * Newline-delimited JSON-RPC output over any byte stream.
 *
 * Messages are written compact, one per line, in the reference's shape: no
 * `"jsonrpc"` member, `id` first in responses. A result (or a request's
 * params) may carry one top-level `Base64Payload` field: its bytes are
 * base64-encoded straight onto the stream in slices, so a response far
 * larger than a V8 string (a 512 MiB file is 716 MB of base64) never exists
 * as one string, and a block costs no JSON.stringify over its base64.
 */
import net from 'node:net';
import type { Writable } from 'node:stream';
import { AbstractMessageWriter, type Message } from 'vscode-jsonrpc';
import type { OutputStream } from '../protocol/types.js';
import { Base64Payload } from '../protocol/base64-payload.js';
import { BufferPool } from './buffer-pool.js';
import { encodeOutputLine } from './output-line.js';
import type { WireIds } from './wire-ids.js';
import { type Json, wireOrder } from './wire-order.js';

const PLACEHOLDER = '\u0000exec-server-base64-payload\u0000';
// A multiple of 3 bytes, so slices concatenate to one valid base64 string;
// small enough that each slice's string is young garbage (V8 allocates
// strings over about 128 KiB in the old generation, which grows the heap
// until a full collection). Payloads above one slice are streamed.
const SLICE_BYTES = 48 * 1024;

/**
 * Marks a Writable whose write is done with its chunk by the time it calls
 * back (it copies it, as a socket hands it to the kernel): output line
 * buffers written to it may then be reused (`copiesWrites`).
 */
const COPIES_WRITES = Symbol('exec-server.copiesWrites');

/** Says that `stream` is done with each chunk when its write calls back; returns it. */
export function copiesWrites<T extends Writable>(stream: T): T {
  return Object.assign(stream, { [COPIES_WRITES]: true });
}

const PAUSE_BYTES = 1024 * 1024;
const RESUME_BYTES = 256 * 1024;

/** Where a message may carry a `Base64Payload`: an answer's result, or a request's params (not a notification's). */
function payloadHolder(value: Json): 'result' | 'params' | undefined {
  if ('method' in value && value.id === undefined) return undefined;
  const holder = 'method' in value ? 'params' : 'result';
  const members = value[holder];
  return members !== null && typeof members === 'object' ? holder : undefined;
}

/** The key of a large `Base64Payload` directly inside the result or params, if any. */
function findLargePayload(value: Json, holder: 'result' | 'params' | undefined): string | undefined {
  if (!holder) return undefined;
  const members = value[holder] as Json;
  // for-in, not Object.entries: no arrays made per message on the round-trip path.
  for (const key in members) {
    const field = members[key];
    if (field instanceof Base64Payload && field.bytes.length > SLICE_BYTES) return key;
  }
  return undefined;
}

/** Small payloads went out inside the line (or never will): their buffers may be reused. */
function releaseSmallPayloads(value: Json, holder: 'result' | 'params' | undefined): void {
  if (!holder) return;
  const members = value[holder] as Json;
  for (const key in members) {
    const field = members[key];
    if (field instanceof Base64Payload) field.release();
  }
}

export class LineMessageWriter extends AbstractMessageWriter {
  private closed = false;
  private readonly drainListeners: Array<() => void> = [];
  /** Lines waiting while a payload line is being streamed. */
  private held: Array<{ write: () => void; bytes: number }> | undefined;
  private heldBytes = 0;
  private corked = false;
  private readonly lines = new BufferPool();
  /**
   * A socket's write calls back once the kernel has the bytes, so an output
   * line's buffer can then be reused (likewise a stream marked with
   * `copiesWrites`). Any other stream (a PassThrough handed to ExecServer)
   * may still hold that very buffer for its reader: there, every line gets a
   * buffer of its own.
   */
  private readonly reusesLines: boolean;

  /** `ids`: the aliases of ids that go back as the client wrote them (`wire-ids.ts`). */
  constructor(
    private readonly output: Writable,
    private readonly ids?: WireIds,
  ) {
    super();
    this.reusesLines = output instanceof net.Socket || COPIES_WRITES in output;
    output.on('error', (error) => {
      this.closed = true;
      this.fireError(error, undefined, undefined);
    });
    output.on('close', () => {
      this.closed = true;
      this.fireClose();
    });
  }

  /**
   * Flow control with our own marks: a single 87 KB output line already
   * exceeds a pipe's 16 KiB high-water mark, and pausing producers at that
   * mark would stop them after every chunk. Producers pause above
   * `PAUSE_BYTES` buffered and resume below `RESUME_BYTES`.
   */
  get congested(): boolean {
    return this.output.writableLength + this.heldBytes > PAUSE_BYTES;
  }

  /** Runs `listener` whenever buffered output falls below the resume mark. */
  onDrain(listener: () => void): void {
    this.drainListeners.push(listener);
  }

  private afterFlush = (): void => {
    if (this.drainListeners.length === 0 || this.output.writableLength + this.heldBytes > RESUME_BYTES) return;
    for (const listener of this.drainListeners) listener();
  };

  write(message: Message): Promise<void> {
    return this.writeRaw(wireOrder(message as unknown as Json));
  }

  /** Writes any JSON object as one line (used for `id: null` error replies). */
  writeRaw(value: Json): Promise<void> {
    const holder = payloadHolder(value);
    if (this.closed) {
      releaseSmallPayloads(value, holder); // nothing will send them: what they hold goes back all the same
      return Promise.resolve();
    }
    const payloadKey = findLargePayload(value, holder);
    // No replacer on the common path: a replacer function turns off V8's fast JSON.stringify.
    if (payloadKey === undefined || holder === undefined) {
      const line = `${this.withWireId(JSON.stringify(value), value.id)}\n`;
      releaseSmallPayloads(value, holder);
      return this.push(line, 'method' in value);
    }
    const members = value[holder] as Json;
    const payload = members[payloadKey] as Base64Payload;
    const text = this.withWireId(JSON.stringify({ ...value, [holder]: { ...members, [payloadKey]: PLACEHOLDER } }), value.id);
    const at = text.indexOf(JSON.stringify(PLACEHOLDER));
    const head = text.slice(0, at + 1);
    const tail = `${text.slice(at + JSON.stringify(PLACEHOLDER).length - 1)}\n`;
    return new Promise((resolve) => this.whenFree(() => void this.streamPayload(head, payload, tail).then(resolve)));
  }

  /** `json` with an aliased id (the first member) put back as the client wrote it. */
  private withWireId(json: string, id: unknown): string {
    const text = this.ids?.textOf(id);
    // A function, not the text itself: `$` in a replacement string is a pattern.
    return text === undefined ? json : json.replace(JSON.stringify(id), () => text);
  }

  /**
   * One huge line, written slice by slice as the stream drains, so that the
   * base64 of a 512 MiB file never sits in memory at once. Other lines wait
   * (`held`) until it is complete: nothing may be written into its middle.
   */
  private async streamPayload(head: string, payload: Base64Payload, tail: string): Promise<void> {
    const bytes = payload.bytes;
    this.held = [];
    this.output.write(head);
    for (let offset = 0; offset < bytes.length && !this.closed; offset += SLICE_BYTES) {
      const slice = bytes.subarray(offset, offset + SLICE_BYTES).toString('base64');
      // Base64 is ASCII: written as latin1 it is copied as it is, not UTF-8 encoded (npm run bench -- --only blocks).
      if (!this.output.write(slice, 'latin1')) {
        await this.drained();
        this.afterFlush(); // the slices written may have been what congested the output
      }
    }
    this.output.write(tail, this.afterFlush);
    payload.release();
    const held = this.held ?? [];
    this.held = undefined;
    this.heldBytes = 0;
    // Through whenFree again: a held payload line that starts streaming holds the ones after it.
    for (const { write, bytes } of held) this.whenFree(write, bytes);
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.output.off('drain', done);
        this.output.off('close', done);
        resolve();
      };
      this.output.on('drain', done);
      this.output.on('close', done);
    });
  }

  /**
   * Messages written in one tick leave in one `writev`: an exit notification
   * and the close that follows it cost the reader one wake-up, not two.
   * (Output lines skip this: they are large, and each is its own write. So
   * do answers: a client waits on each, and the end of the tick is several
   * microseconds away; an answer written while the stream is corked still
   * leaves in order, with the batch.)
   */
  private batchThisTick(): void {
    if (this.corked) return;
    this.corked = true;
    this.output.cork();
    process.nextTick(() => {
      this.corked = false;
      this.output.uncork();
    });
  }

  /** Runs `write` now, or after the payload line being streamed. */
  private whenFree(write: () => void, bytes = 0): void {
    if (!this.held) {
      write();
      return;
    }
    this.held.push({ write, bytes });
    this.heldBytes += bytes;
  }

  /** Writes a `process/output` notification (the hot path), in a reused buffer. */
  writeOutput(processId: string, seq: number, stream: OutputStream, bytes: Buffer): void {
    if (this.closed) return;
    const line = encodeOutputLine(processId, seq, stream, bytes, this.reusesLines ? this.lines.take : Buffer.allocUnsafe);
    const written = () => {
      if (this.reusesLines) this.lines.give(line);
      this.afterFlush();
    };
    this.whenFree(() => this.output.write(line, written), line.length);
  }

  /** `batch`: hold the line to the end of this tick with any others written in it (see `batchThisTick`). */
  private push(text: string, batch: boolean): Promise<void> {
    if (batch) this.batchThisTick();
    return new Promise((resolve) => {
      // Errors surface through the stream's 'error' event (see constructor).
      this.whenFree(() => {
        this.output.write(text, () => {
          this.afterFlush();
          resolve();
        });
      }, text.length);
    });
  }

  end(): void {
    this.output.end();
  }
}
