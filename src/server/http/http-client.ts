/**
 * `http/request` (§5) on undici. Not the global fetch: fetch uppercases
 * method names, merges and sorts request headers, and decompresses bodies;
 * the reference does none of that. undici's `request` sends what it is given,
 * and its redirect interceptor follows redirects as the reference does.
 */
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { Errors, ErrorTexts } from '../../protocol/errors.js';
import type { DecodedParamsOf } from '../../protocol/methods.js';
import { Notification } from '../../protocol/notifications.js';
import type { Base64Decoder } from '../../protocol/base64.js';
import type { HttpBodyDeltaNotification, HttpHeader, HttpRequestResult } from '../../protocol/types.js';
import { validateRequest } from './validate-request.js';

type Params = DecodedParamsOf<'http/request'>;

const MAX_REDIRECTIONS = 10;

/** How streamed bodies reach the client, and whether the client keeps up. */
export interface DeltaChannel {
  notify(method: typeof Notification.HttpBodyDelta, params: HttpBodyDeltaNotification): void;
  isCongested(): boolean;
  onResume(listener: () => void): void;
}

interface ActiveStream {
  /** Undefined while the response head is awaited. */
  body: Readable | undefined;
  abort(reason: string): void;
}

type Undici = typeof import('undici');

export class HttpClient {
  private undici: Promise<{ request: Undici['request']; following: Dispatcher; direct: Dispatcher }> | undefined;
  private readonly streams = new Map<string, ActiveStream>();
  /** Buffered requests still waiting for their whole answer. */
  private readonly buffered = new Set<AbortController>();

  constructor(
    private readonly channel: DeltaChannel,
    /** Where `valueEnvVar` headers take their values from. */
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    channel.onResume(() => {
      for (const stream of this.streams.values()) stream.body?.resume();
    });
  }

  /** undici is loaded on the first request: a server that makes none starts faster. */
  private load(): Promise<{ request: Undici['request']; following: Dispatcher; direct: Dispatcher }> {
    this.undici ??= import('undici').then((module) => {
      // Bundled, this CommonJS package comes as a default export.
      const { Agent, interceptors, request } = 'Agent' in module ? module : (module as { default: Undici }).default;
      const direct = new Agent();
      return { request, direct, following: direct.compose(interceptors.redirect({ maxRedirections: MAX_REDIRECTIONS })) };
    });
    return this.undici;
  }

  async request(params: Params, decodeBase64: Base64Decoder): Promise<HttpRequestResult> {
    const valid = validateRequest(params, decodeBase64, this.env);
    const { request, following, direct } = await this.load();
    // `redirectPolicy: "stop"` (generation 2) answers a redirect itself; absent or `follow` follows it.
    const dispatcher = params.redirectPolicy === 'stop' ? direct : following;
    const streaming = params.streamResponse === true;
    if (streaming && this.streams.has(params.requestId)) throw Errors.httpStreamActive(params.requestId);
    const controller = new AbortController();
    const timeoutMs = params.timeoutMs ?? undefined;
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => controller.abort(), Math.min(timeoutMs, 2 ** 31 - 1));
    const clear = () => timer && clearTimeout(timer);
    if (timeoutMs === 0) controller.abort();
    let response: Dispatcher.ResponseData;
    try {
      if (streaming) this.reserve(params.requestId, controller);
      else this.buffered.add(controller);
      response = await request(valid.url, {
        method: valid.method as Dispatcher.HttpMethod,
        headers: valid.headers,
        body: valid.body,
        signal: controller.signal,
        dispatcher,
      });
    } catch {
      clear();
      this.streams.delete(params.requestId);
      this.buffered.delete(controller);
      // The URL as URL parsing normalized it, without userinfo, as the reference names it.
      throw Errors.httpSendFailed(valid.url.href);
    }
    const head = { status: response.statusCode, headers: flattenHeaders(response.headers) };
    if (streaming) {
      this.stream(params.requestId, response.body, controller, clear);
      return { ...head, bodyBase64: '' };
    }
    try {
      const body = Buffer.from(await response.body.arrayBuffer());
      return { ...head, bodyBase64: body.toString('base64') };
    } catch {
      throw Errors.httpBodyFailed();
    } finally {
      clear();
      this.buffered.delete(controller);
    }
  }

  /**
   * Aborts every streamed body with a terminal delta (EXT-DRAIN step 5), and
   * any buffered request still waiting (only a drain that stopped waiting for
   * answers, after a signal, has one): it is answered with its error.
   */
  shutdown(): void {
    for (const stream of [...this.streams.values()]) stream.abort(ErrorTexts.bodyInputClosed);
    for (const controller of this.buffered) controller.abort();
  }

  private reserve(requestId: string, controller: AbortController): void {
    this.streams.set(requestId, { body: undefined, abort: () => controller.abort() });
  }

  private stream(requestId: string, body: Readable, controller: AbortController, clear: () => void): void {
    let seq = 0;
    let finished = false;
    const delta = (deltaBase64: string, done: boolean, error: string | null) =>
      this.channel.notify(Notification.HttpBodyDelta, { requestId, seq: ++seq, deltaBase64, done, error });
    const finish = (error: string | null) => {
      if (finished) return;
      finished = true;
      clear();
      this.streams.delete(requestId);
      delta('', true, error);
    };
    this.streams.set(requestId, {
      body,
      abort: (reason) => {
        finish(reason);
        controller.abort();
        body.destroy();
      },
    });
    body.pause();
    body.on('data', (chunk: Buffer) => {
      if (finished) return;
      delta(chunk.toString('base64'), false, null);
      if (this.channel.isCongested()) body.pause();
    });
    body.on('end', () => finish(null));
    body.on('error', () => finish(ErrorTexts.bodyDecodeFailed));
    // Start after the response line has been queued: deltas must follow it.
    setImmediate(() => {
      if (!this.channel.isCongested()) body.resume();
    });
  }
}

/** Visible ASCII and tab only: the reference leaves out a header whose value is anything else. */
const VISIBLE_ASCII = /^[\t\x20-\x7e]*$/;

/**
 * undici's header object → the wire list, lower-case names, duplicates kept;
 * values without trailing blanks, and only those the reference can read as
 * text (visible ASCII), as it answers them.
 */
function flattenHeaders(headers: Record<string, string | string[] | undefined>): HttpHeader[] {
  const list: HttpHeader[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      if (VISIBLE_ASCII.test(item)) list.push({ name: name.toLowerCase(), value: item.replace(/[\t ]+$/, '') });
    }
  }
  return list;
}
