/**
 * EXT-DRAIN needs to know when every request read has been answered: these
 * wrappers count requests handed to vscode-jsonrpc and responses written.
 */
import type { Writable } from 'node:stream';
import type { Message } from 'vscode-jsonrpc';
import type { LineMessageReader } from '../transport/line-reader.js';
import { LineMessageWriter } from '../transport/line-writer.js';
import { doesBoundedWork } from './input-hold.js';

/** Counts the responses that reach the stream, for EXT-DRAIN. */
export class CountingWriter extends LineMessageWriter {
  constructor(
    output: Writable,
    private readonly onResponse: (id: unknown) => void,
  ) {
    super(output);
  }

  override write(message: Message): Promise<void> {
    const written = super.write(message);
    if ('id' in message && !('method' in message)) void written.then(() => this.onResponse(message.id));
    return written;
  }
}

/**
 * Counts the requests read, for EXT-DRAIN, and hands them to vscode-jsonrpc one id at a time:
 * it queues requests by id (1 and "1" alike), so a second request with the id of one not yet
 * answered would replace it, unanswered. Such a request waits here for that answer (`answered`),
 * and every request is answered, in order, as by the reference.
 */
export class CountingReader {
  /** Ids of requests handed on and not yet answered: whether that one does bounded work, and the requests that wait for it. */
  private readonly unanswered = new Map<string, { bounded: boolean; waiting: Message[] }>();
  private deliver: (message: Message) => void = () => undefined;
  /** Requests of bounded work read and not yet answered, those waiting here among them (see `input-hold.ts`). */
  boundedUnanswered = 0;

  constructor(
    private readonly inner: LineMessageReader,
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
    this.deliver = callback;
    return this.inner.listen((message) => {
      if ('id' in message && 'method' in message) {
        this.onRequest();
        const bounded = doesBoundedWork(message.method as string);
        if (bounded) this.boundedUnanswered++;
        const key = String(message.id);
        const earlier = this.unanswered.get(key);
        if (earlier) return void earlier.waiting.push(message);
        this.unanswered.set(key, { bounded, waiting: [] });
      }
      callback(message);
    });
  }

  /** The answer to request `id` is out: the next request with that id goes on. */
  answered(id: unknown): void {
    const key = String(id);
    const entry = this.unanswered.get(key);
    if (!entry) return;
    if (entry.bounded) this.boundedUnanswered--;
    const next = entry.waiting.shift() as (Message & { method: string }) | undefined;
    if (!next) return void this.unanswered.delete(key);
    entry.bounded = doesBoundedWork(next.method);
    this.deliver(next);
  }
  dispose(): void {
    this.inner.dispose();
  }
}
