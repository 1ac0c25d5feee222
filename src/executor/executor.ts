/**
 * One interface for running processes and touching files, whether here (in
 * this Node process) or through an exec-server. Both implementations pass
 * the same contract tests, so seq numbers, ordering, retention and errors
 * (`ExecServerError` with the protocol's code and message) match.
 */
import type { ProcessEvent, ReadResult } from '../client/process-session.js';
import type { Readable, Writable } from 'node:stream';
import type { FileStreamOptions } from '../client/file-streams.js';
import type {
  EnvironmentInfoResult,
  FsDirectoryEntry,
  FsMetadataResult,
  FsWalkResult,
  ProcessStartParams,
  WalkOptions,
  WriteStatus,
} from '../protocol/types.js';

export type { ProcessEvent };

/** `process/start` params exactly as on the wire. */
export type ExecutorStartParams = ProcessStartParams;

export interface ExecutorReadParams {
  processId: string;
  afterSeq?: number;
  maxBytes?: number;
  waitMs?: number;
}

/** Receives every process's events, each process's in seq order. */
export type ExecutorEventListener = (processId: string, event: ProcessEvent) => void;

export interface Executor {
  /**
   * Whose shapes results take: 2 (the current protocol: exit codes 128+signal on pipes,
   * `nextSeq` counting every event, `sandboxDenied`) or 1 (Codex 0.134's, e.g.
   * through a server that only speaks it, or when asked with `protocolGeneration: 1`).
   */
  readonly protocolGeneration: 1 | 2;
  start(params: ExecutorStartParams): Promise<{ processId: string }>;
  read(params: ExecutorReadParams): Promise<ReadResult>;
  write(processId: string, bytes: Uint8Array, options?: { closeStdin?: boolean }): Promise<WriteStatus>;
  /** SIGKILLs the process group; true if the process was still running. */
  terminate(processId: string): Promise<boolean>;
  resize(processId: string, rows: number, cols: number): Promise<void>;
  signal(processId: string, signal: string): Promise<void>;
  /** Subscribes to events; returns the unsubscribe function. */
  onEvent(listener: ExecutorEventListener): () => void;
  /** The machine's shell, directories (native paths), platform and capabilities. */
  environmentInfo(): Promise<EnvironmentInfoResult>;

  readFile(path: string): Promise<Buffer>;
  writeFile(path: string, data: Uint8Array): Promise<void>;
  createDirectory(path: string, options?: { recursive?: boolean }): Promise<void>;
  getMetadata(path: string): Promise<FsMetadataResult>;
  readDirectory(path: string): Promise<FsDirectoryEntry[]>;
  remove(path: string, options?: { recursive?: boolean; force?: boolean }): Promise<void>;
  copy(sourcePath: string, destinationPath: string, options: { recursive: boolean }): Promise<void>;
  canonicalize(path: string): Promise<string>;
  walk(root: string, options?: Partial<WalkOptions>): Promise<FsWalkResult>;
  /** The file as a Readable over the block methods (bounded memory for any size). */
  openRead(path: string, options?: FileStreamOptions): Readable;
  /** A Writable that replaces the file, over the block methods. */
  openWrite(path: string, options?: FileStreamOptions): Writable;

  /** Kills what is still running and releases the executor. */
  close(): Promise<void>;
}
