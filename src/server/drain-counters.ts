/**
 * EXT-DRAIN needs to know when every request read has been answered: these
 * wrappers count requests handed to vscode-jsonrpc and responses written.
 */
import type { Writable } from 'node:stream';
import type { Message, RequestMessage } from 'vscode-jsonrpc';
import type { LineMessageReader } from '../transport/line-reader.js';
import { LineMessageWriter } from '../transport/line-writer.js';
import type { WireIds } from '../transport/wire-ids.js';
import { doesBoundedWork } from './input-hold.js';

/** Counts the responses that reach the stream, for EXT-DRAIN. */
export class CountingWriter extends LineMessageWriter {
  constructor(
    output: Writable,
    ids: WireIds,
    private readonly onResponse: (id: unknown) => void,
  ) {
    super(output, ids);
  }

  override write(message: Message): Promise<void> {
    const written = super.write(message);
    if ('id' in message && !('method' in message)) void written.then(() => this.onResponse(message.id));
    return written;
  }
}

/**
 * Counts the requests read, for EXT-DRAIN, and hands them to vscode-jsonrpc. It keys requests
 * by `String(id)` (1 and "1" alike), so a second request with the id of one not yet answered
 * would replace it, unanswered: such a request goes on under an alias (`wire-ids.ts`), in its
 * turn, and is answered with its own id, as the reference answers every request.
 */
export class CountingReader {
  /** Requests handed on and not yet answered, by the key vscode-jsonrpc gives them: whether each does bounded work. */
  private readonly unanswered = new Map<string, boolean>();
  /** Requests of bounded work read and not yet answered (see `input-hold.ts`). */
  boundedUnanswered = 0;

  constructor(
    private readonly inner: LineMessageReader,
    private readonly ids: WireIds,
    private readonly onRequest: () => void,
  ) {}
  get onError() {
    return this.inner.onError;
  }
  get onClose() {
    return this.inner.onClose;
  }
  get onPartialMessage() {
    return this.inner.onPartialMessage;
  }
  listen(callback: (message: Message) => void) {
    return this.inner.listen((message) => {
      if (!('id' in message && 'method' in message)) return callback(message);
      this.onRequest();
      const bounded = doesBoundedWork(message.method as string);
      if (bounded) this.boundedUnanswered++;
      let request = message as RequestMessage;
      if (this.unanswered.has(String(request.id))) request = { ...request, id: this.ids.alias(this.ids.wireText(request.id)) };
      this.unanswered.set(String(request.id), bounded);
      callback(request);
    });
  }

  /** The answer to request `id` is out. */
  answered(id: unknown): void {
    const key = String(id);
    const bounded = this.unanswered.get(key);
    if (bounded === undefined) return;
    if (bounded) this.boundedUnanswered--;
    this.unanswered.delete(key);
    this.ids.release(id);
  }
  dispose(): void {
    this.inner.dispose();
  }
}
