/**
 * The protocol, described once: every request method with its params schema,
 * result schema, lifecycle-gate family and the generations that send it;
 * every notification with its params. The server's handlers, the client's
 * calls and both executors are typed from this table, and the JSON Schema in
 * `schema/` is generated from it. To add a method, add an entry here.
 */
import type { z } from 'zod';
import type { Base64Payload } from './base64-payload.js';
import * as R from './results.js';
import * as P from './schemas.js';

/** 1: Codex 0.134's protocol (PROTOCOL.md); 2: Codex 0.169's (PROTOCOL-V2.md). */
export type Generation = 1 | 2;
/** The family named in "client must call initialize before using <family> methods" (§2.3). */
export type GateFamily = 'exec' | 'filesystem' | 'http' | 'environment';

export interface MethodSpec<
  Params extends z.ZodType = z.ZodType,
  Result extends z.ZodType = z.ZodType,
  Family extends GateFamily | undefined = GateFamily | undefined,
> {
  readonly params: Params;
  /** The struct serde names in "invalid type: …, expected struct X". */
  readonly struct: string;
  /** Its name in generation 2, where it differs (Codex 0.169 renamed some to `Wire…`). */
  readonly structV2?: string;
  readonly result: Result;
  /** Undefined: callable before the handshake completes. */
  readonly family: Family;
  /** The protocol generations whose clients send it (an extension of ours is listed under 1). */
  readonly generations: readonly Generation[];
  /**
   * Whether a client may send it again when its connection dropped with the
   * request in flight (the first may or may not have been carried out):
   * `safe` (reads, and calls whose repeat changes nothing), `withWriteId`
   * (a `process/write` carrying a `writeId`, which the server applies once),
   * `never` (its outcome is unknown; the caller must decide).
   */
  readonly retry: 'safe' | 'withWriteId' | 'never';
  readonly summary: string;
}

export const BOTH = [1, 2] as const;
const spec = <Params extends z.ZodType, Result extends z.ZodType, Family extends GateFamily | undefined>(
  value: MethodSpec<Params, Result, Family>,
) => value;

export const Methods = {
  initialize: spec({
    params: P.InitializeParams,
    struct: 'InitializeParams',
    result: R.InitializeResult,
    family: undefined,
    generations: BOTH,
    retry: 'never',
    summary: 'Opens the session; once per connection.',
  }),
  'process/start': spec({
    params: P.ProcessStartParams,
    struct: 'ExecParams',
    structV2: 'WireExecParams',
    result: R.ProcessStartResult,
    family: 'exec',
    generations: BOTH,
    retry: 'never',
    summary: 'Starts a process on pipes or a PTY.',
  }),
  'process/read': spec({
    params: P.ProcessReadParams,
    struct: 'ReadParams',
    result: R.ProcessReadResult,
    family: 'exec',
    generations: BOTH,
    retry: 'safe',
    summary: 'Reads retained output after a seq, optionally waiting for more.',
  }),
  'process/write': spec({
    params: P.ProcessWriteParams,
    struct: 'WriteParams',
    result: R.ProcessWriteResult,
    family: 'exec',
    generations: BOTH,
    retry: 'withWriteId',
    summary: "Writes to a process's stdin (once per writeId).",
  }),
  'process/terminate': spec({
    params: P.ProcessIdParams,
    struct: 'TerminateParams',
    result: R.ProcessTerminateResult,
    family: 'exec',
    generations: BOTH,
    retry: 'never',
    summary: "Kills a process's whole tree.",
  }),
  'process/resize': spec({
    params: P.ProcessResizeParams,
    struct: 'ResizeParams',
    result: R.EmptyResult,
    family: 'exec',
    generations: BOTH,
    retry: 'safe',
    summary: "Resizes a PTY process's terminal.",
  }),
  'process/signal': spec({
    params: P.ProcessSignalParams,
    struct: 'SignalParams',
    result: R.EmptyResult,
    family: 'exec',
    generations: BOTH,
    retry: 'never',
    summary: "Sends a signal to a process's group (an extension in generation 1).",
  }),
  'environment/info': spec({
    params: P.EnvironmentInfoParams,
    struct: 'EnvironmentInfoParams',
    result: R.EnvironmentInfo,
    family: 'environment',
    generations: BOTH,
    retry: 'safe',
    summary: 'Describes the machine: shell, cwd, platform, capabilities (an extension in generation 1).',
  }),
  'environment/status': spec({
    params: P.EnvironmentInfoParams,
    struct: 'EnvironmentStatusParams',
    result: R.EnvironmentStatusResult,
    family: 'environment',
    generations: [2],
    retry: 'safe',
    summary: 'Says whether the environment is ready.',
  }),
  'fs/readFile': spec({
    params: P.FsPathParams,
    struct: 'FsReadFileParams',
    structV2: 'WireFsReadFileParams',
    result: R.FsReadFileResult,
    family: 'filesystem',
    generations: BOTH,
    retry: 'safe',
    summary: 'Reads a whole file.',
  }),
  'fs/writeFile': spec({
    params: P.FsWriteFileParams,
    struct: 'FsWriteFileParams',
    structV2: 'WireFsWriteFileParams',
    result: R.EmptyResult,
    family: 'filesystem',
    generations: BOTH,
    retry: 'never',
    summary: 'Writes a whole file.',
  }),
  'fs/createDirectory': spec({
    params: P.FsCreateDirectoryParams,
    struct: 'FsCreateDirectoryParams',
    structV2: 'WireFsCreateDirectoryParams',
    result: R.EmptyResult,
    family: 'filesystem',
    generations: BOTH,
    retry: 'never',
    summary: 'Creates a directory (recursively by default).',
  }),
  'fs/getMetadata': spec({
    params: P.FsPathParams,
    struct: 'FsGetMetadataParams',
    structV2: 'WireFsGetMetadataParams',
    result: R.FsMetadataResult,
    family: 'filesystem',
    generations: BOTH,
    retry: 'safe',
    summary: 'Stats a path.',
  }),
  'fs/readDirectory': spec({
    params: P.FsPathParams,
    struct: 'FsReadDirectoryParams',
    structV2: 'WireFsReadDirectoryParams',
    result: R.FsReadDirectoryResult,
    family: 'filesystem',
    generations: BOTH,
    retry: 'safe',
    summary: 'Lists a directory.',
  }),
  'fs/remove': spec({
    params: P.FsRemoveParams,
    struct: 'FsRemoveParams',
    structV2: 'WireFsRemoveParams',
    result: R.EmptyResult,
    family: 'filesystem',
    generations: BOTH,
    retry: 'never',
    summary: 'Removes a file or tree.',
  }),
  'fs/copy': spec({
    params: P.FsCopyParams,
    struct: 'FsCopyParams',
    structV2: 'WireFsCopyParams',
    result: R.EmptyResult,
    family: 'filesystem',
    generations: BOTH,
    retry: 'never',
    summary: 'Copies a file, symlink or tree.',
  }),
  'fs/canonicalize': spec({
    params: P.FsPathParams,
    struct: 'FsCanonicalizeParams',
    structV2: 'WireFsCanonicalizeParams',
    result: R.FsCanonicalizeResult,
    family: 'filesystem',
    generations: BOTH,
    retry: 'safe',
    summary: 'Resolves a path to its canonical form.',
  }),
  'fs/walk': spec({
    params: P.FsWalkParams,
    struct: 'WireFsWalkParams',
    result: R.FsWalkResult,
    family: 'filesystem',
    generations: [2],
    retry: 'safe',
    summary: 'Lists a tree breadth-first, within limits.',
  }),
  'fs/open': spec({
    params: P.FsOpenParams,
    struct: 'WireFsOpenParams',
    result: R.FsOpenResult,
    family: 'filesystem',
    generations: [2],
    retry: 'never',
    summary: 'Opens a file for block reads, or truncates it for block writes (mode replace).',
  }),
  'fs/readBlock': spec({
    params: P.FsReadBlockParams,
    struct: 'FsReadBlockParams',
    result: R.FsReadBlockResult,
    family: 'filesystem',
    generations: [2],
    retry: 'never',
    summary: 'Reads up to 1 MiB at an offset of an open file.',
  }),
  'fs/writeBlock': spec({
    params: P.FsWriteBlockParams,
    struct: 'FsWriteBlockParams',
    result: R.EmptyResult,
    family: 'filesystem',
    generations: [2],
    retry: 'never',
    summary: 'Writes up to 1 MiB at an offset of a file opened with mode replace.',
  }),
  'fs/close': spec({
    params: P.FsCloseParams,
    struct: 'FsCloseParams',
    result: R.EmptyResult,
    family: 'filesystem',
    generations: [2],
    retry: 'never',
    summary: 'Closes a file handle (always succeeds).',
  }),
  'fs/watchMissing': spec({
    params: P.FsWatchMissingParams,
    struct: 'FsWatchMissingParams',
    result: R.FsWatchMissingResult,
    family: 'filesystem',
    generations: [2],
    retry: 'never',
    summary: 'Watches for missing paths to appear (or a present one to go): one watch per connection, one notification.',
  }),
  'http/request': spec({
    params: P.HttpRequestParams,
    struct: 'HttpRequestParams',
    result: R.HttpRequestResult,
    family: 'http',
    generations: BOTH,
    retry: 'never',
    summary: 'Makes an HTTP request from the server machine.',
  }),
} as const satisfies Record<string, MethodSpec>;

export type MethodName = keyof typeof Methods;
/** What a caller sends (paths as strings, optional members omitted). */
export type ParamsOf<M extends MethodName> = z.input<(typeof Methods)[M]['params']>;
/** What a handler receives after decoding (paths resolved, see `schemas.ts`). */
export type DecodedParamsOf<M extends MethodName> = z.output<(typeof Methods)[M]['params']>;
export type ResultOf<M extends MethodName> = z.output<(typeof Methods)[M]['result']>;
/** The result members that may carry a whole file or body. */
type PayloadMember = 'dataBase64' | 'bodyBase64' | 'chunk';
/**
 * A result as the server's handlers produce it, and as an in-process caller
 * gets it: a payload member may be a `Base64Payload` (streamed onto the wire
 * without building the string, see `transport/line-writer.ts`).
 */
export type ProducedResultOf<M extends MethodName> = {
  [K in keyof ResultOf<M>]: K extends PayloadMember ? ResultOf<M>[K] | Base64Payload : ResultOf<M>[K];
};

export function isMethodName(name: string): name is MethodName {
  return Object.hasOwn(Methods, name);
}

/** Method names by a constant-like key, for callers that prefer `Method.ProcessStart`. */
export const Method = {
  Initialize: 'initialize',
  ProcessStart: 'process/start',
  ProcessRead: 'process/read',
  ProcessWrite: 'process/write',
  ProcessTerminate: 'process/terminate',
  ProcessResize: 'process/resize',
  ProcessSignal: 'process/signal',
  EnvironmentInfo: 'environment/info',
  EnvironmentStatus: 'environment/status',
  FsReadFile: 'fs/readFile',
  FsWriteFile: 'fs/writeFile',
  FsCreateDirectory: 'fs/createDirectory',
  FsGetMetadata: 'fs/getMetadata',
  FsReadDirectory: 'fs/readDirectory',
  FsRemove: 'fs/remove',
  FsCopy: 'fs/copy',
  FsCanonicalize: 'fs/canonicalize',
  FsWalk: 'fs/walk',
  FsOpen: 'fs/open',
  FsReadBlock: 'fs/readBlock',
  FsWriteBlock: 'fs/writeBlock',
  FsClose: 'fs/close',
  FsWatchMissing: 'fs/watchMissing',
  HttpRequest: 'http/request',
} as const satisfies Record<string, MethodName>;
