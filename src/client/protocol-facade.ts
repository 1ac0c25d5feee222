/**
 * The typed calls every way of reaching a server offers, written once: the
 * fs methods, the process methods by id, and `environment/info`. A subclass
 * says how a call travels (`ExecServerClient` over JSON-RPC, `LocalExecutor`
 * into an in-process session, `RemoteExecutor` through its client) and how
 * its server wants paths (native, or `file://` URIs for generation 2).
 */
import { Base64Payload, bytesOf } from '../protocol/base64-payload.js';
import type { MethodName, ProducedResultOf, SentParamsOf } from '../protocol/methods.js';
import type {
  EnvironmentInfoResult,
  FsDirectoryEntry,
  FsMetadataResult,
  FsWalkResult,
  WalkOptions,
  WriteStatus,
} from '../protocol/types.js';
import type { Readable, Writable } from 'node:stream';
import { ClientErrors } from './errors.js';
import { blockReader, blockWriter, type Call, type FileStreamOptions } from './file-streams.js';
import { decodeReadResult, type ReadOptions, type ReadResult, type SessionBackend } from './process-session.js';
import type { ServerGeneration } from './server-generation.js';

const WALK_DEFAULTS: WalkOptions = { maxDepth: 64, maxDirectories: 10_000, maxEntries: 50_000, followDirectorySymlinks: false };

export abstract class ProtocolFacade {
  /** Sends one request of the protocol table and resolves with its result. */
  protected abstract call<M extends MethodName>(method: M, params: SentParamsOf<M>): Promise<ProducedResultOf<M>>;

  /** How the server wants paths and writes (learnt from `initialize`). */
  protected abstract speech(): ServerGeneration;

  /** The process methods by id, as a `ProcessSession` calls them. */
  protected sessionBackend(): SessionBackend {
    return {
      read: (processId, options) => this.readProcess(processId, options),
      write: (processId, bytes, closeStdin) => this.write(processId, bytes, { closeStdin }),
      terminate: (processId) => this.terminate(processId),
      resize: (processId, rows, cols) => this.resize(processId, rows, cols),
      signal: (processId, signal) => this.signal(processId, signal),
      hold: () => this.holdOutput(),
    };
  }

  /** Holds back the server's output while a consumer catches up, until released; nothing to hold by default. */
  protected holdOutput(): () => void {
    return () => undefined;
  }

  /** Reads a process's retained output after `afterSeq` (optionally waiting for more). */
  async readProcess(processId: string, options: ReadOptions = {}): Promise<ReadResult> {
    return decodeReadResult(await this.call('process/read', { processId, ...options }));
  }

  /**
   * Writes to a process's stdin by id (`closeStdin` ends it after the bytes).
   * Generation 2 servers get a fresh `writeId` with each write.
   */
  async write(processId: string, bytes: Uint8Array, options: { closeStdin?: boolean } = {}): Promise<WriteStatus> {
    const chunk = new Base64Payload(Buffer.from(bytes));
    const params = { processId, chunk, ...this.speech().writeMembers(), ...(options.closeStdin ? { closeStdin: true } : {}) };
    return (await this.call('process/write', params)).status;
  }

  /** Kills a process's tree; true if it was still running. */
  async terminate(processId: string): Promise<boolean> {
    return (await this.call('process/terminate', { processId })).running;
  }

  async resize(processId: string, rows: number, cols: number): Promise<void> {
    await this.call('process/resize', { processId, rows, cols });
  }

  /** Sends a signal (e.g. `SIGINT`, or `interrupt` to a generation 2 server). */
  async signal(processId: string, signal: string): Promise<void> {
    await this.call('process/signal', { processId, signal });
  }

  /** The server machine's shell, cwd, platform and capabilities; its directories as native paths, whatever the generation. */
  async environmentInfo(): Promise<EnvironmentInfoResult> {
    const info = await this.call('environment/info', {});
    const native = (uri: string) => this.speech().fromServer(uri);
    return {
      ...info,
      cwd: native(info.cwd),
      ...(info.userHomeDir === undefined ? {} : { userHomeDir: native(info.userHomeDir) }),
      tempDir: native(info.tempDir),
      ...(info.temporaryDirectories ? { temporaryDirectories: info.temporaryDirectories.map(native) } : {}),
    };
  }

  async readFile(file: string): Promise<Buffer> {
    return bytesOf((await this.call('fs/readFile', { path: this.speech().path(file) })).dataBase64);
  }

  async writeFile(file: string, data: Uint8Array | string): Promise<void> {
    await this.call('fs/writeFile', { path: this.speech().path(file), dataBase64: new Base64Payload(Buffer.from(data)) });
  }

  async createDirectory(dir: string, options: { recursive?: boolean } = {}): Promise<void> {
    await this.call('fs/createDirectory', { path: this.speech().path(dir), recursive: options.recursive ?? true });
  }

  getMetadata(file: string): Promise<FsMetadataResult> {
    return this.call('fs/getMetadata', { path: this.speech().path(file) });
  }

  async readDirectory(dir: string): Promise<FsDirectoryEntry[]> {
    return (await this.call('fs/readDirectory', { path: this.speech().path(dir) })).entries;
  }

  async remove(target: string, options: { recursive?: boolean; force?: boolean } = {}): Promise<void> {
    await this.call('fs/remove', { path: this.speech().path(target), recursive: options.recursive ?? true, force: options.force ?? true });
  }

  async copy(sourcePath: string, destinationPath: string, options: { recursive: boolean }): Promise<void> {
    const speech = this.speech();
    await this.call('fs/copy', {
      sourcePath: speech.path(sourcePath),
      destinationPath: speech.path(destinationPath),
      recursive: options.recursive,
    });
  }

  /**
   * Lists a tree breadth-first within limits (generation 2's `fs/walk`;
   * defaults: depth 64, 10,000 directories, 50,000 entries, symlinks not
   * followed). Paths come back native.
   */
  async walk(root: string, options: Partial<WalkOptions> = {}): Promise<FsWalkResult> {
    const speech = this.speech();
    const result = await this.call('fs/walk', { path: speech.path(root), options: { ...WALK_DEFAULTS, ...options } });
    return {
      entries: result.entries.map((entry) => ({ ...entry, path: speech.fromServer(entry.path) })),
      errors: result.errors.map((error) => ({ ...error, path: speech.fromServer(error.path) })),
      truncated: result.truncated,
    };
  }

  /** The file as a Readable, read in blocks (`fs/open` and `fs/readBlock`): bounded memory for any size. */
  openRead(file: string, options?: FileStreamOptions): Readable {
    return blockReader(this.handleCalls(), this.speech().path(file), options);
  }

  /** A Writable that replaces the file (truncated at once), written in blocks with `fs/writeBlock`. */
  openWrite(file: string, options?: FileStreamOptions): Writable {
    return blockWriter(this.handleCalls(), this.speech().path(file), options);
  }

  /** @internal What file handles belong to (a server closes them with it); a client's changes when a reconnect replaces its connection. */
  connection(): unknown {
    return undefined;
  }

  /**
   * Calls for one file handle, which belongs to the connection `fs/open` succeeded on: once that
   * connection is replaced they are refused, and one that failed across the change (sent again on
   * the new connection, which knows no such handle) fails with the same client error.
   */
  private handleCalls(): Call {
    let opened: unknown;
    const gone = (method: MethodName) => method !== 'fs/open' && this.connection() !== opened;
    const call = async (method: MethodName, params: unknown): Promise<unknown> => {
      if (gone(method)) throw ClientErrors.handleConnectionReplaced();
      try {
        const result = await this.call(method, params as never);
        if (method === 'fs/open') opened = this.connection();
        return result;
      } catch (error) {
        throw gone(method) ? ClientErrors.handleConnectionReplaced() : error;
      }
    };
    return call as Call;
  }

  /** The canonical form of a path, as a native path. */
  async canonicalize(file: string): Promise<string> {
    return this.speech().fromServer((await this.call('fs/canonicalize', { path: this.speech().path(file) })).path);
  }
}
