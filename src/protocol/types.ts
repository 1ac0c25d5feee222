/**
 * TypeScript shapes of every params, result and notification on the wire
 * (PROTOCOL.md §0). Params types come from the zod schemas; byte fields are
 * base64 strings here; the client library converts them to `Uint8Array`.
 */
import type { z } from 'zod';
import type * as S from './schemas.js';

export type RequestId = string | number;

export type InitializeParams = z.input<typeof S.InitializeParams>;
export interface InitializeResult {
  sessionId: string;
  /** Generation 2 servers (Codex 0.169) describe their environment here. */
  environmentInfo?: { cwd?: string; [key: string]: unknown };
}

export type ProcessStartParams = z.input<typeof S.ProcessStartParams>;
export interface ProcessStartResult {
  processId: string;
}

export type ProcessReadParams = z.input<typeof S.ProcessReadParams>;
export type OutputStream = 'stdout' | 'stderr' | 'pty';
export interface ProcessOutputChunk {
  seq: number;
  stream: OutputStream;
  /** base64 */
  chunk: string;
}
export interface ProcessReadResult {
  chunks: ProcessOutputChunk[];
  nextSeq: number;
  exited: boolean;
  exitCode: number | null;
  closed: boolean;
  failure: string | null;
  /** Generation 2 only: whether the sandbox made the command fail. */
  sandboxDenied?: boolean;
}

export type ProcessWriteParams = z.input<typeof S.ProcessWriteParams>;
export type WriteStatus = 'accepted' | 'unknownProcess' | 'stdinClosed' | 'starting';
export interface ProcessWriteResult {
  status: WriteStatus;
}

export interface ProcessTerminateParams {
  processId: string;
}
export interface ProcessTerminateResult {
  running: boolean;
}

export type ProcessResizeParams = z.input<typeof S.ProcessResizeParams>;
export type ProcessSignalParams = z.input<typeof S.ProcessSignalParams>;
export type EmptyResult = Record<string, never>;

export interface EnvironmentInfoResult {
  shell: { name: string; path: string };
  cwd: string;
  platform: string;
  arch: string;
  homeDir: string;
  pid: number;
  /** Generation 2 fields (PROTOCOL-V2.md §1c). */
  executorVersion: string;
  userHomeDir: string;
  platformOs: string;
  tempDir: string;
  capabilities: Record<string, boolean>;
}

export interface ProcessOutputNotification {
  processId: string;
  seq: number;
  stream: OutputStream;
  chunk: string;
}
export interface ProcessExitedNotification {
  processId: string;
  seq: number;
  exitCode: number;
}
export interface ProcessClosedNotification {
  processId: string;
  seq: number;
}

export type FsPathParams = z.input<typeof S.FsPathParams>;
export type FsWriteFileParams = z.input<typeof S.FsWriteFileParams>;
export type FsCreateDirectoryParams = z.input<typeof S.FsCreateDirectoryParams>;
export type FsRemoveParams = z.input<typeof S.FsRemoveParams>;
export type FsCopyParams = z.input<typeof S.FsCopyParams>;
export interface FsReadFileResult {
  dataBase64: string;
}
export interface FsMetadataResult {
  isDirectory: boolean;
  isFile: boolean;
  isSymlink: boolean;
  createdAtMs: number;
  modifiedAtMs: number;
  /** Generation 2 only: bytes of the target (4096 for a directory here). */
  size?: number;
}
export interface FsDirectoryEntry {
  fileName: string;
  isDirectory: boolean;
  isFile: boolean;
}
export interface FsReadDirectoryResult {
  entries: FsDirectoryEntry[];
}
export interface FsCanonicalizeResult {
  path: string;
}

export type HttpRequestParams = z.input<typeof S.HttpRequestParams>;
export interface HttpHeader {
  name: string;
  value: string;
}
export interface HttpRequestResult {
  status: number;
  headers: HttpHeader[];
  bodyBase64: string;
}
export interface HttpBodyDeltaNotification {
  requestId: string;
  seq: number;
  deltaBase64: string;
  done: boolean;
  error: string | null;
}
