/**
 * EXT-DRAIN needs to know when every request read has been answered: these
 * wrappers count requests handed to vscode-jsonrpc and responses written.
 */
import type { Writable } from 'node:stream';
import type { Message } from 'vscode-jsonrpc';
import type { LineMessageReader } from '../transport/line-reader.js';
import { LineMessageWriter } from '../transport/line-writer.js';

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

/** Counts the requests handed to vscode-jsonrpc, for EXT-DRAIN. */
export class CountingReader {
  constructor(
    private readonly inner: LineMessageReader,
    private readonly onRequest: (id: unknown, method: string) => void,
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
      if ('id' in message && 'method' in message) this.onRequest(message.id, message.method as string);
      callback(message);
    });
  }
  dispose(): void {
    this.inner.dispose();
  }
}
