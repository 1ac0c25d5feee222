/**
 * The executor that runs processes in this Node process: a server session
 * of its own, reached without JSON or a helper process in between, so
 * requests go through the server's own dispatcher (same gate, params
 * decoding and errors). Nothing starts until the first call.
 */
import { ClientErrors } from '../client/errors.js';
import type { ReadResult } from '../client/process-session.js';
import { ProtocolFacade } from '../client/protocol-facade.js';
import { ServerGeneration } from '../client/server-generation.js';
import type { ProtocolError } from '../protocol/errors.js';
import { Base64Payload } from '../protocol/base64-payload.js';
import type { MethodName, ProducedResultOf, SentParamsOf } from '../protocol/methods.js';
import type { PayloadStash } from '../protocol/payload-stash.js';
import { Notification, type NotificationName, type NotificationParamsOf } from '../protocol/notifications.js';
import { ProcessRuntime } from '../server/process/runtime.js';
import { ServerSession } from '../server/session.js';
import type { Executor, ExecutorEventListener, ExecutorReadParams, ExecutorStartParams } from './executor.js';
import { ListenerSet } from './listeners.js';

export interface LocalExecutorOptions {
  /** Shared with other servers in this process (default: one of its own, stopped by `close`). */
  runtime?: ProcessRuntime;
}

export class LocalExecutor extends ProtocolFacade implements Executor {
  readonly protocolGeneration = 2;
  private readonly listeners = new ListenerSet();
  /** Native paths, and a writeId on each write, which the session's generation 2 requires. */
  private readonly native = new ServerGeneration(1, undefined, true);
  private session: ServerSession | undefined;
  private runtime: ProcessRuntime | undefined;
  /** Once `close` began: every call fails, as on a RemoteExecutor whose client closed. */
  private closing: Promise<void> | undefined;

  constructor(private readonly options: LocalExecutorOptions = {}) {
    super();
  }

  protected async call<M extends MethodName>(method: M, params: SentParamsOf<M>): Promise<ProducedResultOf<M>> {
    if (this.closing) throw ClientErrors.disconnected('the executor is closed');
    try {
      const session = this.opened();
      const result = (await session.dispatch(method, withStashedPayloads(params, session.payloads))) as ProducedResultOf<M>;
      // A long-poll woken by `close` (its process killed) answers; the call was cut off all the same.
      if (this.closing) throw ClientErrors.disconnected('the executor is closed');
      return result;
    } catch (error) {
      // A call under way when `close` began was cut off by it (an open file is closed under it): say so, not how.
      if (this.closing) throw ClientErrors.disconnected('the executor is closed');
      throw ClientErrors.fromServer(error as ProtocolError);
    }
  }

  protected speech(): ServerGeneration {
    return this.native;
  }

  /** The session, created and initialized on first use. */
  private opened(): ServerSession {
    if (this.session) return this.session;
    this.runtime = this.options.runtime ?? new ProcessRuntime();
    this.session = new ServerSession(
      {
        notify: (name, params) => this.onNotification(name, params),
        // The session lends `chunk` for the call only (its memory is reused): listeners get a copy to keep.
        output: (processId, seq, stream, chunk) =>
          this.listeners.emit(processId, { type: 'output', seq, stream, chunk: Buffer.from(chunk) }),
        isCongested: () => false,
        onResume: () => undefined,
      },
      // Generation 2's shapes, as a RemoteExecutor gets them from a current server.
      { runtime: this.runtime, generation: 2 },
    );
    void this.session.dispatch('initialize', { clientName: 'local-executor' });
    this.session.notification(Notification.Initialized, {});
    return this.session;
  }

  private onNotification<N extends NotificationName>(name: N, params: NotificationParamsOf<N>): void {
    const is = <K extends NotificationName>(wanted: K, _params: unknown): _params is NotificationParamsOf<K> => name === (wanted as string);
    if (is(Notification.ProcessExited, params))
      this.listeners.emit(params.processId, { type: 'exited', seq: params.seq, exitCode: params.exitCode });
    else if (is(Notification.ProcessClosed, params)) this.listeners.emit(params.processId, { type: 'closed', seq: params.seq });
  }

  async start(params: ExecutorStartParams): Promise<{ processId: string }> {
    return { processId: (await this.call('process/start', params)).processId };
  }

  read({ processId, ...options }: ExecutorReadParams): Promise<ReadResult> {
    return this.readProcess(processId, options);
  }

  onEvent(listener: ExecutorEventListener): () => void {
    return this.listeners.add(listener);
  }

  /** Ends every process and open file; a second call waits for the same end. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.session?.shutdown();
      if (!this.options.runtime) this.runtime?.stop();
    })();
    return this.closing;
  }
}

/** Payload params handed over as bytes: the session's methods take them from its stash, with no base64 in between. */
function withStashedPayloads(params: object, stash: PayloadStash): object {
  const payloads = Object.entries(params).filter(([, value]) => value instanceof Base64Payload);
  if (payloads.length === 0) return params;
  return { ...params, ...Object.fromEntries(payloads.map(([key, value]) => [key, stash.stash((value as Base64Payload).bytes)])) };
}
