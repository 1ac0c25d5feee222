/**
 * Newline-delimited JSON-RPC input over any byte stream (vscode-jsonrpc has
 * only Content-Length framing). One line is one message; blank lines are
 * skipped; a line may end with CRLF.
 *
 * A line that is not UTF-8, not JSON, not a message, or longer than
 * `maxLineBytes` never reaches the connection: it goes to `onInvalidLine`
 * with the JSON-RPC error that describes it, and reading goes on.
 */
import { isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import { AbstractMessageReader, Disposable, type DataCallback, type Message } from 'vscode-jsonrpc';
import { Errors, type ProtocolError } from '../protocol/errors.js';
import type { PayloadStash } from '../protocol/payload-stash.js';
import { DEFAULT_MAX_LINE_BYTES } from '../protocol/defaults.js';
import { classify } from './classify.js';
import { LARGE_LINE_BYTES, parseLargeAnswer, parseLargeLine } from './large-line.js';
import { duplicateKey, mayCarrySandbox } from './duplicate-keys.js';
import { lexicalFault } from './lexical-checks.js';
import type { WireIds } from './wire-ids.js';
import { answerIdOf } from './answer-id.js';

const NEWLINE = 0x0a;
const OPEN_BRACE = 0x7b;

export interface LineReaderOptions {
  /** Longest accepted line, in bytes, without its newline. */
  maxLineBytes?: number;
  /** Called for every line that is not a valid JSON-RPC message. */
  onInvalidLine?: (error: ProtocolError, line: string | undefined) => void;
  /** Called once when the input ends (after the last line was delivered). */
  onEnd?: () => void;
  /**
   * Delivered to the connection once the input ends, after its last line:
   * vscode-jsonrpc queues what it gets, so a handler of this message runs
   * after every message read before the end (`onEnd` runs before them).
   */
  endMessage?: Message;
  /**
   * Whether the end of input closes the vscode-jsonrpc connection. A server
   * that drains its work after EOF (EXT-DRAIN) must keep it open.
   */
  closeOnEnd?: boolean;
  /** Where a request id that cannot travel as a JS number (beyond 2^53) gets its alias (a server's reader). */
  ids?: WireIds;
  /**
   * Sees every complete line's bytes first; returning true consumes the
   * line (a fast path for hot, fixed-shape messages).
   */
  preview?: (line: Buffer) => boolean;
  /**
   * Where to keep the decoded payload of large `fs/writeFile`,
   * `process/write` and `http/request` lines, decoded as they are parsed (a
   * server's reader; see `large-line.ts`). Without it they parse as usual.
   */
  payloads?: PayloadStash;
  /**
   * A server's reader: while this says so, lines are not handed on (the rest
   * of the chunk waits and the input is paused) until `release` is called.
   * Answers then cannot pile up faster than the client reads them.
   */
  holdWhile?: () => boolean;
  /**
   * A client's reader: the server writes whole lines, so a last line without
   * its newline that is not JSON was cut off (the server died writing it).
   * It is no protocol violation: this message is delivered instead of
   * `endMessage`.
   */
  cutEndMessage?: Message;
  /**
   * A client's reader: large base64 members of answers (`fs/readBlock`'s
   * `chunk`, `fs/readFile`'s `dataBase64`) arrive decoded, as a
   * `Base64Payload` (see `large-line.ts`).
   */
  answerPayloads?: boolean;
  /**
   * Each line is a message the peer framed itself (a WebSocket's): a blank
   * one is refused as a message with nothing in it, where over stdio blank
   * lines are skipped.
   */
  blankLinesAreMessages?: boolean;
}

export class LineMessageReader extends AbstractMessageReader {
  private readonly maxLineBytes: number;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private discarding = false;
  /** The id of the answer being discarded (a client's reader), when its line starts with one. */
  private discardedId: number | string | undefined;
  private callback: DataCallback | undefined;
  private ended = false;
  /** The input has ended: what is left is a last line without its newline. */
  private inLastLine = false;
  /** That last line was cut off (`cutEndMessage`). */
  private cutOff = false;
  /** Input read but not yet handed on while held (`holdWhile`), and whether it ended meanwhile. */
  private held: Buffer | undefined;
  private endWhileHeld = false;

  constructor(
    private readonly input: Readable,
    private readonly options: LineReaderOptions = {},
  ) {
    super();
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    const onData = (chunk: Buffer) => this.onChunk(chunk);
    const onEnd = () => {
      if (this.held) this.endWhileHeld = true;
      else this.onInputEnd();
    };
    const onError = (error: Error) => {
      this.fireError(error);
      this.onInputEnd();
    };
    this.input.on('data', onData);
    this.input.on('end', onEnd);
    this.input.on('error', onError);
    return Disposable.create(() => {
      this.input.off('data', onData);
      this.input.off('end', onEnd);
      this.input.off('error', onError);
    });
  }

  /** Stops reading: later input is ignored (used on shutdown signals). */
  stop(): void {
    this.input.pause();
    this.held = undefined;
    this.onInputEnd();
  }

  /** Hands on what was held, unless `holdWhile` still says to hold; then reads on. */
  release(): void {
    if (!this.held || this.options.holdWhile?.()) return;
    const held = this.held;
    this.held = undefined;
    this.onChunk(held);
    if (this.held) return;
    if (this.endWhileHeld) this.onInputEnd();
    else this.input.resume();
  }

  /** Hands `message` on behind the messages read so far (a mark its listener acts on in order). */
  deliver(message: Message): void {
    if (!this.ended) this.callback?.(message);
  }

  private onChunk(chunk: Buffer): void {
    if (this.ended) return;
    if (this.held) {
      this.held = Buffer.concat([this.held, chunk]); // came before the pause took hold
      return;
    }
    let start = 0;
    for (let newline = chunk.indexOf(NEWLINE, start); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
      // Before each line is handed on, the first of a chunk too (a WebSocket message's newline comes alone).
      if (this.options.holdWhile?.()) {
        this.held = chunk.subarray(start);
        this.input.pause();
        return;
      }
      this.append(chunk.subarray(start, newline));
      this.finishLine();
      start = newline + 1;
    }
    if (start < chunk.length) this.append(chunk.subarray(start));
  }

  private append(piece: Buffer): void {
    if (this.discarding || piece.length === 0) return;
    if (this.pendingBytes + piece.length > this.maxLineBytes) {
      this.discarding = true;
      this.discardedId = this.options.answerPayloads ? answerIdOf([...this.pending, piece]) : undefined;
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    this.pending.push(piece);
    this.pendingBytes += piece.length;
  }

  private finishLine(): void {
    if (this.discarding) {
      this.discarding = false;
      // An answer too long to take fails its own request; anything else is not a message at all.
      const error = this.discardedId === undefined ? undefined : Errors.answerTooLong(this.maxLineBytes).toJSON();
      if (error) this.callback?.({ id: this.discardedId, error } as unknown as Message);
      else this.invalid(Errors.lineTooLong(this.maxLineBytes), undefined);
      return;
    }
    if (this.pendingBytes >= LARGE_LINE_BYTES && this.takeLargeLine()) return;
    const text = this.takeLineText();
    if (text !== undefined) this.handleText(text);
  }

  /** Delivers a large line through `parseLargeLine` or `parseLargeAnswer`; false leaves it to the ordinary path. */
  private takeLargeLine(): boolean {
    const { payloads, answerPayloads } = this.options;
    const value = payloads ? parseLargeLine(this.pending, payloads) : answerPayloads ? parseLargeAnswer(this.pending) : undefined;
    if (value === undefined) return false;
    this.pending = [];
    this.pendingBytes = 0;
    const classified = classify(value);
    if (classified.ok) {
      this.callback?.(classified.message);
    } else {
      payloads?.release((value as { params?: unknown }).params); // no method will claim it
      this.options.onInvalidLine?.(classified.error, undefined);
    }
    return true;
  }

  private joinPending(): Buffer {
    return this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
  }

  /**
   * The pending bytes as text, or undefined if the line was consumed by
   * `preview`, empty, or not UTF-8. A separate step so that the bytes are
   * unreachable while a large line is parsed.
   */
  private takeLineText(): string | undefined {
    const bytes = this.joinPending();
    this.pending = [];
    this.pendingBytes = 0;
    if (bytes.length === 0 && !this.options.blankLinesAreMessages) return undefined;
    if (this.options.preview?.(bytes)) return undefined;
    // isUtf8 (simdutf) then toString is several times faster than a fatal TextDecoder.
    if (!isUtf8(bytes)) {
      this.invalid(Errors.parseError('invalid UTF-8'), undefined);
      return undefined;
    }
    try {
      return bytes.toString('utf8');
    } catch {
      // Longer than V8's longest string (about 512 MiB) and not a line the large-line path takes.
      this.options.onInvalidLine?.(Errors.parseError(`a line of ${bytes.length} bytes is longer than the longest string`), undefined);
      return undefined;
    }
  }

  private handleText(text: string): void {
    // A message starts with `{`: only other lines need the (copying) trim.
    if (text.charCodeAt(0) !== OPEN_BRACE && text.trim().length === 0) {
      if (this.options.blankLinesAreMessages) this.invalid(Errors.parseError('an empty message'), text);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      this.invalid(Errors.parseError((error as Error).message), text);
      return;
    }
    const duplicate = mayCarrySandbox(text) ? duplicateKey(text) : undefined;
    const fault =
      duplicate !== undefined
        ? Errors.parseError(`duplicate JSON object key \`${duplicate}\``)
        : lexicalFault(value, text, this.options.ids);
    if (fault) return void this.options.onInvalidLine?.(fault, text);
    const classified = classify(value);
    if (classified.ok) this.callback?.(classified.message);
    else this.options.onInvalidLine?.(classified.error, text);
  }

  /** A line that is no message: reported, unless it is a last line cut off (`cutEndMessage`), cut anywhere. */
  private invalid(error: ProtocolError, line: string | undefined): void {
    if (this.inLastLine && this.options.cutEndMessage) this.cutOff = true;
    else this.options.onInvalidLine?.(error, line);
  }

  private onInputEnd(): void {
    if (this.ended) return;
    this.inLastLine = true;
    if (this.discarding || this.pendingBytes > 0) this.finishLine();
    this.ended = true;
    const end = this.cutOff ? this.options.cutEndMessage : this.options.endMessage;
    if (end) this.callback?.(end);
    this.options.onEnd?.();
    if (this.options.closeOnEnd) this.fireClose();
  }
}
