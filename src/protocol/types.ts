/**
 * TypeScript shapes of every params, result and notification on the wire,
 * derived from the schemas (`schemas.ts` for params, `results.ts` for the
 * rest). Byte fields are base64 strings here; the client library converts
 * them to `Uint8Array`.
 */
import type { z } from 'zod';
import type * as R from './results.js';
import type * as S from './schemas.js';

export type RequestId = string | number;

export type InitializeParams = z.input<typeof S.InitializeParams>;
export type InitializeResult = z.output<typeof R.InitializeResult>;

export type ProcessStartParams = z.input<typeof S.ProcessStartParams>;
export type ProcessStartResult = z.output<typeof R.ProcessStartResult>;
export type ProcessReadParams = z.input<typeof S.ProcessReadParams>;
export type OutputStream = z.output<typeof R.OutputStream>;
export type ProcessOutputChunk = z.output<typeof R.ProcessOutputChunk>;
export type ProcessReadResult = z.output<typeof R.ProcessReadResult>;
export type ProcessWriteParams = z.input<typeof S.ProcessWriteParams>;
export type WriteStatus = z.output<typeof R.WriteStatus>;
export type ProcessWriteResult = z.output<typeof R.ProcessWriteResult>;
export type ProcessTerminateParams = z.input<typeof S.ProcessIdParams>;
export type ProcessTerminateResult = z.output<typeof R.ProcessTerminateResult>;
export type ProcessResizeParams = z.input<typeof S.ProcessResizeParams>;
export type ProcessSignalParams = z.input<typeof S.ProcessSignalParams>;
export type SandboxType = z.output<typeof R.SandboxType>;
export type EmptyResult = z.output<typeof R.EmptyResult>;

export type EnvironmentInfoResult = z.output<typeof R.EnvironmentInfo>;

export type ProcessOutputNotification = z.output<typeof R.ProcessOutputNotification>;
export type ProcessExitedNotification = z.output<typeof R.ProcessExitedNotification>;
export type ProcessClosedNotification = z.output<typeof R.ProcessClosedNotification>;

export type FsPathParams = z.input<typeof S.FsPathParams>;
export type FsWriteFileParams = z.input<typeof S.FsWriteFileParams>;
export type FsCreateDirectoryParams = z.input<typeof S.FsCreateDirectoryParams>;
export type FsRemoveParams = z.input<typeof S.FsRemoveParams>;
export type FsCopyParams = z.input<typeof S.FsCopyParams>;
export type FsReadFileResult = z.output<typeof R.FsReadFileResult>;
export type FsMetadataResult = z.output<typeof R.FsMetadataResult>;
export type FsDirectoryEntry = z.output<typeof R.FsDirectoryEntry>;
export type FsReadDirectoryResult = z.output<typeof R.FsReadDirectoryResult>;
export type FsCanonicalizeResult = z.output<typeof R.FsCanonicalizeResult>;
export type FsWalkParams = z.input<typeof S.FsWalkParams>;
export type WalkOptions = FsWalkParams['options'];
export type FsWalkResult = z.output<typeof R.FsWalkResult>;

export type HttpRequestParams = z.input<typeof S.HttpRequestParams>;
export type HttpHeader = z.output<typeof R.HttpHeader>;
export type HttpRequestResult = z.output<typeof R.HttpRequestResult>;
export type HttpBodyDeltaNotification = z.output<typeof R.HttpBodyDeltaNotification>;
