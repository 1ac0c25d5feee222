/**
 * One request, start to finish, for the server and for `LocalExecutor` alike:
 * the method looked up in the protocol table, the client's generation
 * noted, params decoded, the lifecycle gate checked, the handler run, any
 * failure turned into a `ProtocolError`, unclaimed payloads released.
 */
import type { Base64Decoder } from '../protocol/base64.js';
import { decodeParams } from '../protocol/decode.js';
import { Errors, ProtocolError } from '../protocol/errors.js';
import type { GateFamily } from '../protocol/method-spec.js';
import { isMethodName, Methods, type DecodedParamsOf, type MethodName, type ProducedResultOf } from '../protocol/methods.js';
import type { PayloadStash } from '../protocol/payload-stash.js';
import type { ClientGeneration } from './client-generation.js';
import type { Lifecycle } from './lifecycle.js';
import type { Logger } from './logger.js';
import { RequestOrder } from './request-order.js';

/** What a handler may use of the request beside its params. */
export interface RequestContext {
  /** Decodes a base64 param, including one the transport decoded ahead (see `payload-stash.ts`). */
  decodeBase64: Base64Decoder;
  /** The handler is done with bytes `decodeBase64` gave it: their buffer may take the next payload. */
  doneWith(bytes: Buffer): void;
}

type Handler<M extends MethodName> = (
  params: DecodedParamsOf<M>,
  request: RequestContext,
) => ProducedResultOf<M> | Promise<ProducedResultOf<M>>;

/** A handler for every method of the protocol table: a missing one fails to compile. */
export type Handlers = { [M in MethodName]: Handler<M> };

/** The methods of one lifecycle family. */
export type MethodsOfFamily<F extends GateFamily> = {
  [M in MethodName]: (typeof Methods)[M]['family'] extends F ? M : never;
}[MethodName];

export type HandlerGroup<M extends MethodName> = { [K in M]: Handler<K> };

export interface DispatcherState {
  lifecycle: Lifecycle;
  generation: ClientGeneration;
  payloads: PayloadStash;
  logger: Logger;
}

/** The requests that may finish out of order (EXT-CONCURRENCY rule 4): a long-poll read and an HTTP request. */
function mayOvertake(name: string, params: unknown): boolean {
  if (name === 'http/request') return true;
  const waitMs = name === 'process/read' && typeof params === 'object' && params !== null ? (params as { waitMs?: unknown }).waitMs : 0;
  return typeof waitMs === 'number' && waitMs > 0;
}

export class Dispatcher {
  private readonly request: RequestContext;
  private readonly order = new RequestOrder();

  constructor(
    private readonly handlers: Handlers,
    private readonly state: DispatcherState,
  ) {
    this.request = {
      decodeBase64: (text) => state.payloads.decodeBase64(text),
      doneWith: (bytes) => state.payloads.giveBack(bytes),
    };
  }

  /** Runs one request, in order with the others (`request-order.ts`); rejects with a `ProtocolError` only. */
  dispatch(name: string, params: unknown): Promise<unknown> {
    const run = () => this.run(name, params);
    return mayOvertake(name, params) ? this.order.overtaking(run) : this.order.ordered(run, name === 'fs/readBlock');
  }

  private async run(name: string, params: unknown): Promise<unknown> {
    try {
      if (!isMethodName(name)) throw Errors.methodNotFound(name);
      this.state.generation.observe(name, params);
      const spec = Methods[name];
      // A method only generation 2 has is read as generation 2 reads it, whatever the connection speaks.
      const generation = spec.generations.includes(1) ? this.state.generation.value : 2;
      const struct = generation === 2 ? (spec.structV2 ?? spec.struct) : spec.struct;
      const decoded = decodeParams(spec.params, params, struct, generation);
      if (spec.family) this.state.lifecycle.checkGate(spec.family);
      const handler = this.handlers[name] as Handler<MethodName>;
      return await handler(decoded as never, this.request);
    } catch (error) {
      throw this.asProtocolError(name, error);
    } finally {
      this.state.payloads.release(params); // a payload decoded ahead that no method claimed
    }
  }

  /** `initialized` opens the gate, in order with the requests around it; any other notification from the client is ignored. */
  notification(name: string, params: unknown): void {
    void this.order.ordered(async () => {
      this.state.payloads.release(params);
      if (name === 'initialized') this.state.lifecycle.initialized();
      else this.state.logger.debug(`ignored notification ${name}`);
    });
  }

  private asProtocolError(name: string, error: unknown): ProtocolError {
    if (error instanceof ProtocolError) return error;
    this.state.logger.error(`${name} failed: ${(error as Error)?.stack ?? String(error)}`);
    return Errors.internal((error as Error)?.message ?? String(error), error);
  }
}
