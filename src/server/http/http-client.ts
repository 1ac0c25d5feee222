/**
 * `http/request` (§5) on undici. Not the global fetch: fetch uppercases
 * method names, merges and sorts request headers, and decompresses bodies;
 * the reference does none of that. undici's `request` sends what it is given;
 * redirects are followed here, hop by hop (`redirects.ts`).
 */
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { AnswerBudget, type ArrivingBody } from '../answer-budget.js';
import { waitForWake, wakeAll } from '../wait-for-wake.js';
import { Errors, ErrorTexts, ProtocolError } from '../../protocol/errors.js';
import { Base64Payload } from '../../protocol/base64-payload.js';
import type { DecodedParamsOf, ProducedResultOf } from '../../protocol/methods.js';
import { Notification } from '../../protocol/notifications.js';
import type { Base64Decoder } from '../../protocol/base64.js';
import type { HttpBodyDeltaNotification, HttpHeader } from '../../protocol/types.js';
import type { Generation } from '../../protocol/method-spec.js';
import { type RedirectTargets, redirectTargets } from './redirect-targets.js';
import { isHeaderText } from './header-text.js';
import { envProxies } from './env-proxies.js';
import { type Route, sendHop } from './hop-request.js';
import { proxyRoutes } from './proxy-routes.js';
import { type Hop, isRedirect, nextHop } from './redirects.js';
import type { ExtraCaCerts } from './trusted-cas.js';
import { type ValidRequest, validateRequest } from './validate-request.js';
import { isBodilessLengthMismatch, readWholeBody } from './whole-body.js';

type Params = DecodedParamsOf<'http/request'>;

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

/** How long after the end of input a request without a timeout may still wait for its answer (`inputEnded`). */
const INPUT_END_GRACE_MS = 30_000;
/** The abort reason of such a request. */
const INPUT_ENDED = Symbol('input ended');

/**
 * Requests a connection may have in flight: each holds a socket, and a
 * client sending thousands to a server that never answers would otherwise
 * use up the descriptors every other method needs.
 */
const MAX_IN_FLIGHT = 256;
/** hyper's default read buffer for a response head: 8 KiB + 100 × 4 KiB. */
const HYPER_MAX_HEAD_BYTES = 8192 + 4096 * 100;

export class HttpClient {
  /** How a hop goes: to its origin, or through a proxy the environment names (proxy-routes.ts). */
  private undici: Promise<(url: URL, headers: string[]) => Route> | undefined;
  private readonly streams = new Map<string, ActiveStream>();
  /** Requests not yet answered (a buffered one until its whole body is in), each with whether it has a timeout of its own (see `inputEnded`). */
  private readonly unanswered = new Map<AbortController, boolean>();
  private inputEndGraceMs = INPUT_END_GRACE_MS;
  /** Buffered bodies paused while the client is not reading (see `room`). */
  private readonly waitingForClient = new Set<() => void>();

  constructor(
    private readonly channel: DeltaChannel,
    /** Where `valueEnvVar` headers take their values from. */
    private readonly env: NodeJS.ProcessEnv = process.env,
    /** NODE_EXTRA_CA_CERTS's certificates when Node did not read them at start (see `trusted-cas.ts`). */
    private readonly extraCaCerts?: ExtraCaCerts,
    /** The connection's: a buffered body is held to it until its answer is sent (see `answer-budget.ts`). */
    private readonly answers = new AnswerBudget(Number.POSITIVE_INFINITY),
  ) {
    channel.onResume(() => {
      for (const stream of this.streams.values()) stream.body?.resume();
      wakeAll(this.waitingForClient);
    });
  }

  /**
   * Resolves when a buffered body may take its next chunk: the answer budget
   * has room and the client is reading (both wait only for the client).
   * Rejects when the request is aborted first.
   */
  private async room(signal: AbortSignal, body?: ArrivingBody): Promise<void> {
    await this.answers.whenRoom(signal, body);
    while (this.channel.isCongested()) {
      await waitForWake(this.waitingForClient, signal);
      await this.answers.whenRoom(signal, body);
    }
  }

  /** undici is loaded on the first request: a server that makes none starts faster. */
  private load(): Promise<(url: URL, headers: string[]) => Route> {
    this.undici ??= Promise.all([import('undici'), this.extraCaCerts?.secureContext()]).then(([module, secureContext]) => {
      // Bundled, this CommonJS package comes as a default export.
      const { Agent, ProxyAgent } = 'Agent' in module ? module : (module as { default: Undici }).default;
      // Response heads as large as the references' HTTP client (hyper) reads: undici's default
      // (16 KiB) failed a redirect whose location they follow.
      const maxHeaderSize = HYPER_MAX_HEAD_BYTES;
      // No timeouts of undici's own (300 s for a head, and between body chunks): `timeoutMs` is the
      // only one, and without it a request may wait as long as it takes (a quiet long-poll).
      const options = { maxHeaderSize, headersTimeout: 0, bodyTimeout: 0 };
      const direct = new Agent(secureContext ? { ...options, connect: { secureContext } } : options);
      const tls = secureContext ? { requestTls: { secureContext }, proxyTls: { secureContext } } : {};
      const tunnel = (uri: string) => {
        try {
          return new ProxyAgent({ ...options, ...tls, uri });
        } catch {
          return undefined; // a proxy undici cannot use: the reference goes direct too
        }
      };
      return proxyRoutes(envProxies(this.env), { direct, tunnel });
    });
    return this.undici;
  }

  /**
   * Sends the request and follows its redirects unless told to stop
   * (`redirectPolicy: "stop"`, generation 2), by `targets`' rules.
   */
  private async send(valid: ValidRequest, stop: boolean, targets: RedirectTargets, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    const routeFor = await this.load();
    let hop: Hop = valid;
    for (let hops = 0; ; hops++) {
      let response: Dispatcher.ResponseData;
      try {
        response = await sendHop(routeFor, hop.url, hop, signal);
      } catch {
        throw Errors.httpSendFailed(targets.failedUrl(hop.url, valid.url));
      }
      const location = [response.headers.location].flat()[0];
      if (stop || !isRedirect(response.statusCode) || location === undefined) return response;
      // A redirect's body is never read (one that never ends must not hold the request).
      const discard = () => response.body.on('error', () => undefined).destroy();
      let target: URL | undefined;
      try {
        target = targets.follow(hop.url, location, valid.url, hops);
      } catch (error) {
        discard();
        throw error;
      }
      if (!target) return response;
      discard();
      hop = nextHop(hop, response.statusCode, target);
    }
  }

  /** `generation`: the client's, whose reference's redirect rules apply. */
  async request(params: Params, decodeBase64: Base64Decoder, generation: Generation): Promise<ProducedResultOf<'http/request'>> {
    const valid = validateRequest(params, decodeBase64, this.env);
    const streaming = params.streamResponse === true;
    if (streaming && this.streams.has(params.requestId)) throw Errors.httpStreamActive(params.requestId);
    if (params.timeoutMs === 0 && generation === 2) throw Errors.httpNoTime();
    // Each holds a socket (a descriptor) until it is answered or its stream ends.
    if (this.inFlight() >= MAX_IN_FLIGHT) throw Errors.httpTooMany(MAX_IN_FLIGHT);
    // The clock starts once undici is loaded (on first use): loading it is no part of the request's time.
    await this.load();
    const controller = new AbortController();
    const timeoutMs = params.timeoutMs ?? undefined;
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => controller.abort(), Math.min(timeoutMs, 2 ** 31 - 1));
    const clear = () => timer && clearTimeout(timer);
    if (timeoutMs === 0) controller.abort();
    let response: Dispatcher.ResponseData;
    this.unanswered.set(controller, timeoutMs !== undefined);
    try {
      if (streaming) this.reserve(params.requestId, controller);
      response = await this.send(valid, params.redirectPolicy === 'stop', redirectTargets(generation), controller.signal);
    } catch (error) {
      clear();
      this.streams.delete(params.requestId);
      this.unanswered.delete(controller);
      if (controller.signal.reason === INPUT_ENDED) throw Errors.httpInputEnded(valid.url.href, this.inputEndGraceMs);
      throw error instanceof ProtocolError ? error : Errors.httpSendFailed(valid.url.href);
    }
    const head = { status: response.statusCode, headers: flattenHeaders(response.headers) };
    if (streaming) {
      this.unanswered.delete(controller);
      this.stream(params.requestId, response, controller, clear);
      return { ...head, bodyBase64: '' };
    }
    const arriving = this.answers.arriving();
    try {
      const body = await readWholeBody(response.body, response.statusCode, response.headers['content-length'], (bytes) => {
        arriving.add(bytes);
        return this.room(controller.signal, arriving);
      });
      // Encoded onto the wire in slices: a body whose base64 would exceed V8's longest string still goes.
      // Held against the budget until the line writer has sent it.
      return { ...head, bodyBase64: new Base64Payload(body, this.answers.hold(body.length)) };
    } catch {
      throw controller.signal.reason === INPUT_ENDED
        ? Errors.httpInputEnded(valid.url.href, this.inputEndGraceMs)
        : Errors.httpBodyFailed();
    } finally {
      arriving.end(); // after the hold above: held whole now, or failed
      clear();
      this.unanswered.delete(controller);
    }
  }

  /**
   * The client's input ended (EXT-DRAIN): every request read gets its answer, but one without a
   * timeout may never get one from the network (a server that never answers, an endless body),
   * and would keep this server alive for good. Those still waiting after `graceMs` are
   * answered with an error that says so; a request with a timeoutMs keeps its own.
   */
  inputEnded(graceMs = INPUT_END_GRACE_MS): void {
    this.inputEndGraceMs = graceMs;
    setTimeout(() => {
      for (const [controller, timed] of this.unanswered) if (!timed) controller.abort(INPUT_ENDED);
    }, graceMs).unref();
  }

  /**
   * Aborts every streamed body with a terminal delta (EXT-DRAIN step 5), and
   * any request still waiting for its answer (only a drain that stopped waiting for
   * answers, after a signal, has one): it is answered with its error.
   */
  shutdown(): void {
    for (const stream of [...this.streams.values()]) stream.abort(ErrorTexts.bodyInputClosed);
    for (const controller of this.unanswered.keys()) controller.abort();
  }

  /** Requests waiting for their answer, and bodies streaming (a stream still waiting for its head is among the first). */
  private inFlight(): number {
    let streaming = 0;
    for (const stream of this.streams.values()) if (stream.body) streaming++;
    return this.unanswered.size + streaming;
  }

  private reserve(requestId: string, controller: AbortController): void {
    this.streams.set(requestId, { body: undefined, abort: () => controller.abort() });
  }

  private stream(requestId: string, response: Dispatcher.ResponseData, controller: AbortController, clear: () => void): void {
    const body: Readable = response.body;
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
    body.on('error', (error) => finish(isBodilessLengthMismatch(response.statusCode, error) ? null : ErrorTexts.bodyDecodeFailed));
    // Start after the response line has been queued: deltas must follow it.
    setImmediate(() => {
      if (!this.channel.isCongested()) body.resume();
    });
  }
}

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
      if (isHeaderText(item)) list.push({ name: name.toLowerCase(), value: item.replace(/[\t ]+$/, '') });
    }
  }
  return list;
}
