/**
 * The executor that works through an exec-server (ours, the reference, or
 * one reached over ssh / docker exec / kubectl exec) via `ExecServerClient`.
 */
import type { ExecServerClient } from '../client/exec-server-client.js';
import type { ProcessSession, ReadResult } from '../client/process-session.js';
import { ProtocolFacade } from '../client/protocol-facade.js';
import type { ServerGeneration } from '../client/server-generation.js';
import { ClientErrors } from '../client/errors.js';
import { decodeParams } from '../protocol/decode.js';
import type { ProtocolError } from '../protocol/errors.js';
import { type MethodName, Methods, type ProducedResultOf, type SentParamsOf } from '../protocol/methods.js';
import type { Executor, ExecutorEventListener, ExecutorReadParams, ExecutorStartParams } from './executor.js';
import { InFlight } from './in-flight.js';
import { ListenerSet } from './listeners.js';

export class RemoteExecutor extends ProtocolFacade implements Executor {
  private readonly listeners = new ListenerSet();
  private readonly sessions = new Map<string, ProcessSession>();
  /** Starts under way: `close` waits for them, and each kills what it started once it sees the executor closing. */
  private readonly starting = new InFlight();
  /** Once `close` began: every call fails, as on a LocalExecutor (a borrowed client stays open). */
  private closing = false;

  constructor(
    readonly client: ExecServerClient,
    private readonly ownsClient = true,
  ) {
    super();
  }

  get protocolGeneration(): 1 | 2 {
    return this.client.protocolGeneration;
  }

  protected call<M extends MethodName>(method: M, params: SentParamsOf<M>): Promise<ProducedResultOf<M>> {
    return this.unlessClosed(() => this.client.requestProduced(method, params));
  }

  /**
   * `call`'s answer, unless `close` began first or meanwhile: a call under way was cut off
   * by it (a long-poll woken by the kill of its process too), as on a LocalExecutor.
   */
  private async unlessClosed<T>(call: () => Promise<T>): Promise<T> {
    if (this.closing) throw closedError();
    let answer: T;
    try {
      answer = await call();
    } catch (error) {
      if (this.closing) throw closedError();
      throw error;
    }
    if (this.closing) throw closedError();
    return answer;
  }

  protected speech(): ServerGeneration {
    return this.client.serverGeneration;
  }

  override connection(): unknown {
    return this.client.connection();
  }

  async start(params: ExecutorStartParams): Promise<{ processId: string }> {
    if (this.closing) throw closedError();
    return this.starting.track(this.startSession(params));
  }

  private async startSession(params: ExecutorStartParams): Promise<{ processId: string }> {
    // The client fills in a missing cwd or env from this machine, which means nothing on another:
    // a plain-JS caller that left one out gets the server's −32602, as from a LocalExecutor.
    if (params.cwd === undefined || params.env === undefined) refuseAsTheServer('process/start', params);
    // Every member goes through: a sandbox or an envPolicy left behind would run the child differently, unconfined.
    const session = await this.client.start({
      ...params,
      envPolicy: params.envPolicy ?? undefined,
      arg0: params.arg0 ?? undefined,
      size: params.size ?? undefined,
    });
    if (this.closing) {
      // close() ran while it started: it goes the way of the others, and this call fails as a later one would.
      await session.terminate().catch(() => undefined);
      throw closedError();
    }
    this.sessions.set(session.processId, session);
    session.on('event', (event) => this.listeners.emit(session.processId, event));
    session.onFinished = chain(session.onFinished, () => this.sessions.delete(session.processId));
    return { processId: session.processId };
  }

  read(params: ExecutorReadParams): Promise<ReadResult> {
    const { processId, ...options } = params;
    return this.unlessClosed(() => this.sessions.get(processId)?.read(options) ?? this.readProcess(processId, options));
  }

  onEvent(listener: ExecutorEventListener): () => void {
    return this.listeners.add(listener);
  }

  /** Kills what this executor started and is still running; closes the client too if it owns it. */
  async close(): Promise<void> {
    this.closing = true;
    const running = [...this.sessions.values()].filter((session) => !session.done);
    await Promise.all([...running.map((session) => session.terminate().catch(() => undefined)), this.starting.settled()]);
    if (this.ownsClient) await this.client.close();
  }
}

const closedError = () => ClientErrors.disconnected('the executor is closed');

/** Throws the error a server's params decoding gives `params` (generation 2's wording). */
function refuseAsTheServer(method: MethodName, params: unknown): void {
  const spec = Methods[method];
  try {
    decodeParams(spec.params, params, spec.structV2 ?? spec.struct, 2);
  } catch (error) {
    throw ClientErrors.fromServer(error as ProtocolError);
  }
}

function chain(first: (() => void) | undefined, second: () => void): () => void {
  return () => {
    first?.();
    second();
  };
}
