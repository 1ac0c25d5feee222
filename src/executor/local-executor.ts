/**
 * The executor that runs processes in this Node process: the server's own
 * process manager and filesystem methods, called through the server's method
 * table (same params decoding, same errors) but without JSON or a helper
 * process in between.
 */
import { decodeReadResult, type ReadResult } from '../client/process-session.js';
import { ExecServerError } from '../client/errors.js';
import { decodeParams } from '../protocol/decode.js';
import { ProtocolError } from '../protocol/errors.js';
import { Method } from '../protocol/methods.js';
import type {
  FsDirectoryEntry,
  FsMetadataResult,
  OutputStream,
  ProcessReadResult,
  WriteStatus,
} from '../protocol/types.js';
import { fsMethods } from '../server/fs/fs-methods.js';
import type { MethodTable } from '../server/method-table.js';
import { ProcessManager } from '../server/process/process-manager.js';
import { processMethods } from '../server/process-methods.js';
import type { Base64Payload } from '../transport/line-writer.js';
import type { Executor, ExecutorEventListener, ExecutorReadParams, ExecutorStartParams } from './executor.js';
import { ListenerSet } from './listeners.js';

export class LocalExecutor implements Executor {
  private readonly listeners = new ListenerSet();
  private readonly processes: ProcessManager;
  private readonly methods: MethodTable;

  constructor() {
    this.processes = new ProcessManager({
      output: (processId: string, seq: number, stream: OutputStream, bytes: Buffer) =>
        this.listeners.emit(processId, { type: 'output', seq, stream, chunk: bytes }),
      exited: (processId: string, seq: number, exitCode: number, _sandboxDenied: boolean) =>
        this.listeners.emit(processId, { type: 'exited', seq, exitCode }),
      closed: (processId: string, seq: number) => this.listeners.emit(processId, { type: 'closed', seq }),
      generation: () => 1, // in-process callers get generation 1's shapes
    });
    this.methods = { ...processMethods(this.processes, () => 1), ...fsMethods(() => 1) };
  }

  /** Runs a method exactly as the server would, minus the wire. */
  private async invoke<T>(method: string, params: unknown): Promise<T> {
    const handler = this.methods[method]!;
    try {
      return (await handler.run(decodeParams(handler.schema, params, handler.struct))) as T;
    } catch (error) {
      if (error instanceof ProtocolError) throw new ExecServerError(error.code, error.message);
      throw error;
    }
  }

  start(params: ExecutorStartParams): Promise<{ processId: string }> {
    return this.invoke(Method.ProcessStart, params);
  }

  async read(params: ExecutorReadParams): Promise<ReadResult> {
    return decodeReadResult(await this.invoke<ProcessReadResult>(Method.ProcessRead, params));
  }

  async write(processId: string, bytes: Uint8Array, options: { closeStdin?: boolean } = {}): Promise<WriteStatus> {
    const chunk = Buffer.from(bytes).toString('base64');
    const params = { processId, chunk, ...(options.closeStdin ? { closeStdin: true } : {}) };
    return (await this.invoke<{ status: WriteStatus }>(Method.ProcessWrite, params)).status;
  }

  async terminate(processId: string): Promise<boolean> {
    return (await this.invoke<{ running: boolean }>(Method.ProcessTerminate, { processId })).running;
  }

  async resize(processId: string, rows: number, cols: number): Promise<void> {
    await this.invoke(Method.ProcessResize, { processId, rows, cols });
  }

  async signal(processId: string, signal: string): Promise<void> {
    await this.invoke(Method.ProcessSignal, { processId, signal });
  }

  onEvent(listener: ExecutorEventListener): () => void {
    return this.listeners.add(listener);
  }

  async readFile(path: string): Promise<Buffer> {
    return (await this.invoke<{ dataBase64: Base64Payload }>(Method.FsReadFile, { path })).dataBase64.bytes;
  }

  async writeFile(path: string, data: Uint8Array): Promise<void> {
    await this.invoke(Method.FsWriteFile, { path, dataBase64: Buffer.from(data).toString('base64') });
  }

  async createDirectory(path: string, options: { recursive?: boolean } = {}): Promise<void> {
    await this.invoke(Method.FsCreateDirectory, { path, recursive: options.recursive ?? true });
  }

  getMetadata(path: string): Promise<FsMetadataResult> {
    return this.invoke(Method.FsGetMetadata, { path });
  }

  async readDirectory(path: string): Promise<FsDirectoryEntry[]> {
    return (await this.invoke<{ entries: FsDirectoryEntry[] }>(Method.FsReadDirectory, { path })).entries;
  }

  async remove(path: string, options: { recursive?: boolean; force?: boolean } = {}): Promise<void> {
    await this.invoke(Method.FsRemove, { path, recursive: options.recursive ?? true, force: options.force ?? true });
  }

  async copy(sourcePath: string, destinationPath: string, options: { recursive: boolean }): Promise<void> {
    await this.invoke(Method.FsCopy, { sourcePath, destinationPath, recursive: options.recursive });
  }

  async canonicalize(path: string): Promise<string> {
    return (await this.invoke<{ path: string }>(Method.FsCanonicalize, { path })).path;
  }

  async close(): Promise<void> {
    await this.processes.shutdown();
  }
}
