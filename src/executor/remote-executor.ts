/**
 * The executor that works through an exec-server (ours, the reference, or
 * one reached over ssh / docker exec / kubectl exec) via `ExecServerClient`.
 */
import { ExecServerClient } from '../client/exec-server-client.js';
import { decodeReadResult, type ProcessSession, type ReadResult } from '../client/process-session.js';
import { Method } from '../protocol/methods.js';
import type { FsDirectoryEntry, FsMetadataResult, ProcessReadResult, WriteStatus } from '../protocol/types.js';
import type { Executor, ExecutorEventListener, ExecutorReadParams, ExecutorStartParams } from './executor.js';
import { ListenerSet } from './listeners.js';

export class RemoteExecutor implements Executor {
  private readonly listeners = new ListenerSet();
  private readonly sessions = new Map<string, ProcessSession>();

  constructor(
    readonly client: ExecServerClient,
    private readonly ownsClient = true,
  ) {}

  async start(params: ExecutorStartParams): Promise<{ processId: string }> {
    const session = await this.client.start({
      processId: params.processId,
      argv: params.argv,
      cwd: params.cwd,
      env: params.env,
      tty: params.tty,
      pipeStdin: params.pipeStdin,
      arg0: params.arg0 ?? undefined,
      size: params.size ?? undefined,
    });
    this.sessions.set(session.processId, session);
    session.on('event', (event) => this.listeners.emit(session.processId, event));
    session.onFinished = chain(session.onFinished, () => this.sessions.delete(session.processId));
    return { processId: session.processId };
  }

  async read(params: ExecutorReadParams): Promise<ReadResult> {
    const session = this.sessions.get(params.processId);
    if (session) return session.read(params);
    return decodeReadResult(await this.client.request<ProcessReadResult>(Method.ProcessRead, params));
  }

  write(processId: string, bytes: Uint8Array, options: { closeStdin?: boolean } = {}): Promise<WriteStatus> {
    return this.client.write(processId, bytes, options);
  }

  async terminate(processId: string): Promise<boolean> {
    return (await this.client.request<{ running: boolean }>(Method.ProcessTerminate, { processId })).running;
  }

  async resize(processId: string, rows: number, cols: number): Promise<void> {
    await this.client.request(Method.ProcessResize, { processId, rows, cols });
  }

  async signal(processId: string, signal: string): Promise<void> {
    await this.client.request(Method.ProcessSignal, { processId, signal });
  }

  onEvent(listener: ExecutorEventListener): () => void {
    return this.listeners.add(listener);
  }

  readFile(path: string): Promise<Buffer> {
    return this.client.readFile(path);
  }

  writeFile(path: string, data: Uint8Array): Promise<void> {
    return this.client.writeFile(path, data);
  }

  createDirectory(path: string, options?: { recursive?: boolean }): Promise<void> {
    return this.client.createDirectory(path, options);
  }

  getMetadata(path: string): Promise<FsMetadataResult> {
    return this.client.getMetadata(path);
  }

  readDirectory(path: string): Promise<FsDirectoryEntry[]> {
    return this.client.readDirectory(path);
  }

  remove(path: string, options?: { recursive?: boolean; force?: boolean }): Promise<void> {
    return this.client.remove(path, options);
  }

  copy(sourcePath: string, destinationPath: string, options: { recursive: boolean }): Promise<void> {
    return this.client.copy(sourcePath, destinationPath, options);
  }

  canonicalize(path: string): Promise<string> {
    return this.client.canonicalize(path);
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.client.close();
  }
}

function chain(first: (() => void) | undefined, second: () => void): () => void {
  return () => {
    first?.();
    second();
  };
}
