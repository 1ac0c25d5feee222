/**
 * Streamed HTTP bodies on the client side: `http/request/bodyDelta`
 * notifications routed to the response whose body they continue.
 */
import { Errors } from '../protocol/errors.js';
import { randomUuid } from '../protocol/random-ids.js';
import type { HttpBodyDeltaNotification, HttpHeader } from '../protocol/types.js';
import { ClientErrors } from './errors.js';
import { EventQueue } from './event-queue.js';
import { HeldBack } from './held-back.js';
import type { HttpRequestOptions, HttpStreamResponse } from './options.js';
import type { ServerGeneration } from './server-generation.js';

/** A body on its way: what has come and is not read yet, the server held back while that is too much. */
class Body {
  readonly queue = new EventQueue<Buffer | Error>();
  readonly held: HeldBack;
  /** Its reader left before the end: what still comes is dropped, undecoded (the protocol cannot stop the server sending it). */
  abandoned = false;

  constructor(hold: () => () => void) {
    this.held = new HeldBack(hold);
  }

  push(item: Buffer | Error): void {
    if (this.abandoned) return;
    this.queue.push(item);
    if (item instanceof Buffer) this.held.added(item.length);
  }

  /** The reader left early: nothing more is kept or held back for it. */
  abandon(): void {
    this.abandoned = true;
    this.queue.end();
    this.held.letGo();
  }

  /** Everything has come: nothing is held back for it. */
  end(): void {
    this.queue.end();
    this.held.letGo();
  }
}

export class HttpBodies {
  private readonly bodies = new Map<string, Body>();

  /** `hold` holds the server's output back while a body's reader is behind (see `Link.hold`). */
  constructor(private readonly hold: () => () => void = () => () => undefined) {}

  /** How many bodies are still coming. */
  get streaming(): number {
    return this.bodies.size;
  }

  /** Starts collecting the body of `requestId` (before the request is sent: deltas may precede its answer). */
  open(requestId: string): AsyncIterable<Buffer> {
    const body = new Body(this.hold);
    this.bodies.set(requestId, body);
    return bodyIterable(body);
  }

  /** Sends a streamed request with `send` and resolves at its headers, with the body as it arrives. */
  async request(
    options: HttpRequestOptions,
    generation: ServerGeneration,
    send: (params: ReturnType<typeof httpParams>) => Promise<{ status: number; headers: HttpHeader[] }>,
  ): Promise<HttpStreamResponse> {
    const params = httpParams(options, true, generation);
    // The server refuses it too; asking would take the first body's place here, which would then never end.
    if (this.bodies.has(params.requestId)) throw ClientErrors.fromServer(Errors.httpStreamActive(params.requestId));
    const body = this.open(params.requestId);
    try {
      const result = await send(params);
      return { status: result.status, headers: result.headers, body };
    } catch (error) {
      this.bodies.delete(params.requestId);
      throw error;
    }
  }

  receive(delta: HttpBodyDeltaNotification): void {
    const body = this.bodies.get(delta.requestId);
    if (!body) return;
    if (delta.deltaBase64 && !body.abandoned) body.push(Buffer.from(delta.deltaBase64, 'base64'));
    if (delta.done) {
      if (delta.error !== null) body.push(ClientErrors.httpBodyFailed(delta.error));
      body.end();
      this.bodies.delete(delta.requestId);
    }
  }

  /** Ends every open body with `message` as its error. */
  failAll(message: string): void {
    for (const body of this.bodies.values()) {
      body.push(ClientErrors.cutOff(message));
      body.end();
    }
    this.bodies.clear();
  }
}

/** `http/request`'s params for `options`. */
export function httpParams(options: HttpRequestOptions, streamResponse: boolean, generation: ServerGeneration) {
  if (options.redirectPolicy === 'stop') generation.requireGeneration2('redirectPolicy', 'protocol generation 1 always follows redirects');
  return {
    method: options.method,
    url: options.url,
    requestId: options.requestId ?? randomUuid(),
    headers: options.headers ?? [],
    bodyBase64: options.body === undefined ? null : Buffer.from(options.body).toString('base64'),
    timeoutMs: options.timeoutMs ?? null,
    streamResponse,
    ...(options.redirectPolicy ? { redirectPolicy: options.redirectPolicy } : {}),
  };
}

async function* bodyIterable(body: Body): AsyncGenerator<Buffer> {
  try {
    for await (const item of body.queue) {
      if (item instanceof Error) throw item;
      body.held.taken(item.length);
      yield item;
    }
  } finally {
    body.abandon(); // a reader that left early holds nothing back, and nothing piles up for it
  }
}
