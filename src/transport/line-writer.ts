/**
 * Newline-delimited JSON-RPC output over any byte stream.
 *
 * Messages are written compact, one per line, in the reference's shape: no
 * `"jsonrpc"` member, `id` first in responses. A result may carry one
 * `Base64Payload`: its bytes are base64-encoded straight onto the stream in
 * slices, so a response far larger than a V8 string (a 512 MiB file is
 * 716 MB of base64) never exists as one string.
 */
import type { Writable } from 'node:stream';
import { AbstractMessageWriter, type Message } from 'vscode-jsonrpc';

/** Bytes to be sent as one base64 JSON string, streamed without building it. */
export class Base64Payload {
  constructor(readonly bytes: Buffer) {}
  toJSON(): string {
    return this.bytes.toString('base64');
  }
}

const PLACEHOLDER = '\u0000exec-server-base64-payload\u0000';
// A multiple of 3 bytes, so slices concatenate to one valid base64 string.
const SLICE_BYTES = 3 * 1024 * 1024;

type Json = Record<string, unknown>;

function reorder(message: Json): Json {
  if ('id' in message && ('result' in message || 'error' in message)) {
    return 'error' in message && message.error !== undefined
      ? { id: message.id, error: message.error }
      : { id: message.id, result: message.result };
  }
  if ('method' in message) {
    const out: Json = {};
    if ('id' in message) out.id = message.id;
    out.method = message.method;
    if (message.params !== undefined) out.params = message.params;
    return out;
  }
  const { jsonrpc: _ignored, ...rest } = message;
  return rest;
}

export class LineMessageWriter extends AbstractMessageWriter {
  private closed = false;

  constructor(private readonly output: Writable) {
    super();
    output.on('error', (error) => {
      this.closed = true;
      this.fireError([error, undefined, undefined]);
    });
    output.on('close', () => {
      this.closed = true;
      this.fireClose();
    });
  }

  /** True while the stream's buffer is over its high-water mark. */
  get congested(): boolean {
    return this.output.writableNeedDrain;
  }

  /** Runs `listener` each time a congested stream drains. */
  onDrain(listener: () => void): void {
    this.output.on('drain', listener);
  }

  write(message: Message): Promise<void> {
    return this.writeRaw(reorder(message as unknown as Json));
  }

  /** Writes any JSON object as one line (used for `id: null` error replies). */
  writeRaw(value: Json): Promise<void> {
    if (this.closed) return Promise.resolve();
    let payload: Base64Payload | undefined;
    const text = JSON.stringify(value, (_key, field: unknown) => {
      if (field instanceof Base64Payload && field.bytes.length > SLICE_BYTES && payload === undefined) {
        payload = field;
        return PLACEHOLDER;
      }
      return field;
    });
    if (payload === undefined) return this.push(`${text}\n`);
    const at = text.indexOf(JSON.stringify(PLACEHOLDER));
    this.output.write(text.slice(0, at + 1));
    for (let offset = 0; offset < payload.bytes.length; offset += SLICE_BYTES) {
      this.output.write(payload.bytes.subarray(offset, offset + SLICE_BYTES).toString('base64'));
    }
    return this.push(`${text.slice(at + JSON.stringify(PLACEHOLDER).length - 1)}\n`);
  }

  private push(text: string): Promise<void> {
    return new Promise((resolve) => {
      // Errors surface through the stream's 'error' event (see constructor).
      this.output.write(text, () => resolve());
    });
  }

  end(): void {
    this.output.end();
  }
}
