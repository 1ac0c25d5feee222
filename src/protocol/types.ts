/**
 * TypeScript shapes of every params, result and notification on the wire,
 * derived from the schemas (`schemas.ts` for params, `results.ts` for the
 * rest). Byte fields are base64 strings here; the client library converts
 * them to `Uint8Array`.
 */
import type { z } from 'zod';
import type { ResultSchemas } from './results.js';
import type * as S from './schemas.js';

export type RequestId = string | number;

export type InitializeParams = z.input<ReturnType<typeof S.InitializeParams>>;
export type InitializeResult = z.output<ResultSchemas['InitializeResult']>;

export type ProcessStartParams = z.input<ReturnType<typeof S.ProcessStartParams>>;
export type ProcessStartResult = z.output<ResultSchemas['ProcessStartResult']>;
export type ProcessReadParams = z.input<ReturnType<typeof S.ProcessReadParams>>;
export type OutputStream = z.output<ResultSchemas['OutputStream']>;
export type ProcessOutputChunk = z.output<ResultSchemas['ProcessOutputChunk']>;
export type ProcessReadResult = z.output<ResultSchemas['ProcessReadResult']>;
export type ProcessWriteParams = z.input<ReturnType<typeof S.ProcessWriteParams>>;
export type WriteStatus = z.output<ResultSchemas['WriteStatus']>;
export type ProcessWriteResult = z.output<ResultSchemas['ProcessWriteResult']>;
export type ProcessTerminateParams = z.input<ReturnType<typeof S.ProcessIdParams>>;
export type ProcessTerminateResult = z.output<ResultSchemas['ProcessTerminateResult']>;
export type ProcessResizeParams = z.input<ReturnType<typeof S.ProcessResizeParams>>;
export type ProcessSignalParams = z.input<ReturnType<typeof S.ProcessSignalParams>>;
export type SandboxType = z.output<ResultSchemas['SandboxType']>;
export type EmptyResult = z.output<ResultSchemas['EmptyResult']>;

export type EnvironmentInfoResult = z.output<ResultSchemas['EnvironmentInfo']>;

export type ProcessOutputNotification = z.output<ResultSchemas['ProcessOutputNotification']>;
export type ProcessExitedNotification = z.output<ResultSchemas['ProcessExitedNotification']>;
export type ProcessClosedNotification = z.output<ResultSchemas['ProcessClosedNotification']>;

export type FsPathParams = z.input<ReturnType<typeof S.FsPathParams>>;
export type FsWriteFileParams = z.input<ReturnType<typeof S.FsWriteFileParams>>;
export type FsCreateDirectoryParams = z.input<ReturnType<typeof S.FsCreateDirectoryParams>>;
export type FsRemoveParams = z.input<ReturnType<typeof S.FsRemoveParams>>;
export type FsCopyParams = z.input<ReturnType<typeof S.FsCopyParams>>;
export type FsReadFileResult = z.output<ResultSchemas['FsReadFileResult']>;
export type FsMetadataResult = z.output<ResultSchemas['FsMetadataResult']>;
export type FsDirectoryEntry = z.output<ResultSchemas['FsDirectoryEntry']>;
export type FsReadDirectoryResult = z.output<ResultSchemas['FsReadDirectoryResult']>;
export type FsCanonicalizeResult = z.output<ResultSchemas['FsCanonicalizeResult']>;
export type FsWalkParams = z.input<ReturnType<typeof S.FsWalkParams>>;
export type WalkOptions = FsWalkParams['options'];
export type FsWalkResult = z.output<ResultSchemas['FsWalkResult']>;

export type HttpRequestParams = z.input<ReturnType<typeof S.HttpRequestParams>>;
export type HttpHeader = z.output<ResultSchemas['HttpHeader']>;
export type HttpRequestResult = z.output<ResultSchemas['HttpRequestResult']>;
export type HttpBodyDeltaNotification = z.output<ResultSchemas['HttpBodyDeltaNotification']>;
