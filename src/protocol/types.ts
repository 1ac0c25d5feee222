/**
 * TypeScript shapes of every params, result and notification on the wire,
 * derived from the method table (`methods.ts`, for params) and the result
 * schemas (`results.ts`, for the rest). Byte fields are base64 strings here; the client library converts
 * them to `Uint8Array`.
 */
import type { z } from 'zod/mini';
import type { ParamsOf } from './methods.js';
import type { ResultSchemas } from './results.js';

export type RequestId = string | number;

export type InitializeParams = ParamsOf<'initialize'>;
export type InitializeResult = z.output<ResultSchemas['InitializeResult']>;

export type ProcessStartParams = ParamsOf<'process/start'>;
export type ProcessStartResult = z.output<ResultSchemas['ProcessStartResult']>;
export type ProcessReadParams = ParamsOf<'process/read'>;
export type OutputStream = z.output<ResultSchemas['OutputStream']>;
export type ProcessOutputChunk = z.output<ResultSchemas['ProcessOutputChunk']>;
export type ProcessReadResult = z.output<ResultSchemas['ProcessReadResult']>;
export type ProcessWriteParams = ParamsOf<'process/write'>;
export type WriteStatus = z.output<ResultSchemas['WriteStatus']>;
export type ProcessWriteResult = z.output<ResultSchemas['ProcessWriteResult']>;
export type ProcessTerminateParams = ParamsOf<'process/terminate'>;
export type ProcessTerminateResult = z.output<ResultSchemas['ProcessTerminateResult']>;
export type ProcessResizeParams = ParamsOf<'process/resize'>;
export type ProcessSignalParams = ParamsOf<'process/signal'>;
export type SandboxType = z.output<ResultSchemas['SandboxType']>;
export type EmptyResult = z.output<ResultSchemas['EmptyResult']>;

export type EnvironmentInfoResult = z.output<ResultSchemas['EnvironmentInfo']>;

export type ProcessOutputNotification = z.output<ResultSchemas['ProcessOutputNotification']>;
export type ProcessExitedNotification = z.output<ResultSchemas['ProcessExitedNotification']>;
export type ProcessClosedNotification = z.output<ResultSchemas['ProcessClosedNotification']>;

export type FsPathParams = ParamsOf<'fs/getMetadata'>;
export type FsWriteFileParams = ParamsOf<'fs/writeFile'>;
export type FsCreateDirectoryParams = ParamsOf<'fs/createDirectory'>;
export type FsRemoveParams = ParamsOf<'fs/remove'>;
export type FsCopyParams = ParamsOf<'fs/copy'>;
export type FsReadFileResult = z.output<ResultSchemas['FsReadFileResult']>;
export type FsMetadataResult = z.output<ResultSchemas['FsMetadataResult']>;
export type FsDirectoryEntry = z.output<ResultSchemas['FsDirectoryEntry']>;
export type FsReadDirectoryResult = z.output<ResultSchemas['FsReadDirectoryResult']>;
export type FsCanonicalizeResult = z.output<ResultSchemas['FsCanonicalizeResult']>;
export type FsWalkParams = ParamsOf<'fs/walk'>;
export type WalkOptions = FsWalkParams['options'];
export type FsWalkResult = z.output<ResultSchemas['FsWalkResult']>;

export type HttpRequestParams = ParamsOf<'http/request'>;
export type HttpHeader = z.output<ResultSchemas['HttpHeader']>;
export type HttpRequestResult = z.output<ResultSchemas['HttpRequestResult']>;
export type HttpBodyDeltaNotification = z.output<ResultSchemas['HttpBodyDeltaNotification']>;
