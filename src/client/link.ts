/**
 * One transport connection of a client: the line framing, vscode-jsonrpc's
 * connection over it, and the moment it drops. A client has one link at a
 * time; a client that reconnects (`reconnect.ts`) replaces it, and events of
 * a link it has let go of are ignored.
 */
import type { Readable, Writable } from 'node:stream';
import { createMessageConnection, type MessageConnection, type NotificationMessage, ParameterStructures } from 'vscode-jsonrpc/node';
import { LineMessageReader } from '../transport/line-reader.js';
import { LineMessageWriter } from '../transport/line-writer.js';
import { PendingCalls } from './pending-calls.js';

/**
 * The longest line (or WebSocket message) taken from a server. Answers may be
 * far longer than any request: an `fs/readFile` answer reaches 716 MB, and a
 * buffered HTTP body has no limit. Their base64 is decoded piece by piece
 * (`transport/large-line.ts`). An answer over the bound fails its own
 * request (`transport/line-reader.ts`); any other line over it is a
 * protocol violation.
 */
export const MAX_ANSWER_BYTES = 2 ** 31 - 1; // 2 GiB, less the byte that would make it no limit in ws

/** The reader's mark for the end of the server's output, queued behind what came before it. */
const INPUT_ENDED = '$/exec-server/inputEnded';
const INPUT_ENDED_MESSAGE: NotificationMessage = { jsonrpc: '2.0', method: INPUT_ENDED };
/** The mark for an input that ended in the middle of a line (`cutEndMessage`). */
const INPUT_CUT = '$/exec-server/inputCut';
const INPUT_CUT_MESSAGE: NotificationMessage = { jsonrpc: '2.0', method: INPUT_CUT };
/** The mark for a line that is not JSON-RPC, queued behind the answers and events read before it. */
const INVALID_LINE = '$/exec-server/invalidLine';
const invalidLineMark = (line: string): NotificationMessage => ({ jsonrpc: '2.0', method: INVALID_LINE, params: { line } });
/** Its mark for the server's input closed under it, queued behind what was read by then. */
const OUTPUT_CLOSED = '$/exec-server/outputClosed';
const OUTPUT_CLOSED_MESSAGE: NotificationMessage = { jsonrpc: '2.0', method: OUTPUT_CLOSED };

export interface LinkEvents {
  notification(method: string, params: unknown): void;
  /** A line the client takes before JSON parsing (`process/output`); true if it did. */
  preview(line: Buffer): boolean;
  /** A line that is not JSON-RPC. */
  invalidLine(line: string): void;
  /** The link is gone, for `reason` (called once). */
  dropped(reason: string): void;
  /** Whether nothing but the held consumer waits on the server's output (one process or body at most; see `hold`). */
  onlyHeldWait(): boolean;
}

/** Rejects a request whose link dropped: in flight (`sent`), or before it could leave. */
export class LinkDropped extends Error {
  constructor(
    readonly reason: string,
    readonly sent = true,
  ) {
    super(reason);
    this.name = 'LinkDropped';
  }
}

/** The two streams a link reads and writes, and how to drop it at once (a WebSocket's terminate). */
export interface LinkTransport {
  input: Readable;
  output: Writable;
  abort?: () => void;
  /** False once the transport takes nothing more (a WebSocket closing): a request then is not sent at all. */
  writable?: () => boolean;
  /**
   * The transport's drop always ends its input too (a WebSocket's): the link then drops at that
   * end, behind what was read before it, which is still delivered (it is gone from the server).
   */
  endsWithInput?: boolean;
}

export class Link {
  private readonly connection: MessageConnection;
  private readonly drop: Promise<never>;
  private rejectDrop!: (error: LinkDropped) => void;
  private readonly requests = new PendingCalls();
  private down = false;
  /** Consumers behind on the server's output (`hold`), and requests awaiting their answers. */
  private holds = 0;
  private awaited = 0;
  private paused = false;
  /** The transport dropped, and its input is read to its end (`endsWithInput`). */
  private ending = false;

  readonly output: Writable;

  constructor(
    private readonly transport: LinkTransport,
    private readonly events: LinkEvents,
  ) {
    const { input, output } = transport;
    this.output = output;
    this.drop = new Promise<never>((_, reject) => (this.rejectDrop = reject));
    this.drop.catch(() => undefined);
    const reader = new LineMessageReader(input, {
      maxLineBytes: MAX_ANSWER_BYTES,
      // Without the line (too long to keep, not UTF-8), the reader's error says what it was.
      onInvalidLine: (error, line) => reader.deliver(invalidLineMark(line ?? `<${error.message}>`)),
      endMessage: INPUT_ENDED_MESSAGE,
      cutEndMessage: INPUT_CUT_MESSAGE,
      closeOnEnd: true,
      answerPayloads: true,
      preview: (line) => !this.down && events.preview(line),
    });
    this.connection = createMessageConnection(reader, new LineMessageWriter(output));
    // Answers and notifications that came before the end are handled first (see `endMessage`).
    this.connection.onNotification(INPUT_ENDED, () => this.close('the server closed its output'));
    // A server that died while writing a line: gone, not lying.
    this.connection.onNotification(INPUT_CUT, () => this.close('the server closed its output in the middle of a message'));
    this.connection.onNotification(OUTPUT_CLOSED, () => this.close('connection closed'));
    this.connection.onNotification(INVALID_LINE, ({ line }: { line: string }) => {
      if (!this.down) events.invalidLine(line);
    });
    this.connection.onNotification((method, params) => {
      if (!this.down) events.notification(method, params);
    });
    // Not the connection's close: it also fires when the client itself ends the output (closing the
    // server's stdin), while the answers to requests already sent are still on their way. The input's
    // end (its mark, above), the output's errors, and an output closed without that end (a server that died
    // while something else holds its stdout, a socket destroyed here) are what drop the link.
    this.connection.onError(([error]) => this.close(error.message));
    output.on('close', () => {
      if (output.writableEnded) return;
      if (transport.endsWithInput) {
        // Read on to the input's end, held consumers or not: what is left is bounded (the transport's backpressure).
        this.ending = true;
        this.updateFlow();
        return;
      }
      // A server's stdin closes when it exits, which the loop may see before it has read what the
      // server wrote last: a poll phase reads what is in the pipe, then the mark goes behind it.
      setImmediate(() => setImmediate(() => reader.deliver(OUTPUT_CLOSED_MESSAGE)));
    });
    this.connection.listen();
  }

  get isDown(): boolean {
    return this.down;
  }

  /** Resolves once the link is down. */
  whenDown(): Promise<void> {
    return this.drop.catch(() => undefined);
  }

  /** The request's result; rejects with `ResponseError` from the server or `LinkDropped`. */
  request(method: string, params: unknown): Promise<unknown> {
    if (this.down || this.output.writableEnded || this.transport.writable?.() === false)
      return Promise.reject(new LinkDropped('the connection is closing', false));
    this.awaited++;
    this.updateFlow();
    return this.requests.track(this.send(method, params)).finally(() => {
      this.awaited--;
      this.updateFlow();
    });
  }

  /**
   * Sends the params as they are: vscode-jsonrpc's default puts anything but
   * an object in an array (`null` went as `[null]`, which the server refuses
   * for a method without params). `null` or none goes as no params, which
   * servers read as `null`; a scalar is no JSON-RPC params at all.
   */
  private send(method: string, params: unknown): Promise<unknown> {
    if (params === undefined || params === null) return this.connection.sendRequest(method);
    if (Array.isArray(params)) return this.connection.sendRequest(method, ParameterStructures.byPosition, ...params);
    if (typeof params === 'object') return this.connection.sendRequest(method, ParameterStructures.byName, params);
    return Promise.reject(new TypeError(`${method}: params must be an object, an array or null, got ${typeof params}`));
  }

  /**
   * Stops reading the server's output until the returned release is called
   * (a consumer is behind): the pipe fills, and the server stops reading its
   * children's output in turn. That holds everything on the connection, so
   * reading goes on while anything else may be waited for — a request's
   * answer, another process's events, a streamed body — which may be what
   * the consumer waits for (output piped into a file written over this
   * connection, a command run for each line): memory then grows as before,
   * but nothing deadlocks.
   */
  hold(): () => void {
    this.holds++;
    this.updateFlow();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds--;
      this.updateFlow();
    };
  }

  private updateFlow(): void {
    const pause = this.holds > 0 && this.awaited === 0 && !this.down && !this.ending && this.events.onlyHeldWait();
    if (pause === this.paused) return;
    this.paused = pause;
    if (pause) this.transport.input.pause();
    else this.transport.input.resume();
  }

  notify(method: string, params: unknown): Promise<void> {
    return this.connection.sendNotification(method, params);
  }

  /**
   * Lets go of the link: its requests reject (with `LinkDropped`), its events
   * stop, and `events.dropped` hears why, before any rejection is handled.
   */
  close(reason: string): void {
    if (this.down) return;
    this.down = true;
    this.updateFlow(); // what is left to read is read (its end, its errors)
    const dropped = new LinkDropped(reason);
    this.rejectDrop(dropped);
    this.requests.failAll(dropped);
    this.connection.dispose();
    this.events.dropped(reason);
  }

  /** Drops the transport without a goodbye (a WebSocket without a close frame: the server keeps the session), then `close`. */
  abort(reason: string): void {
    if (!this.down) this.transport.abort?.();
    this.close(reason);
  }
}
