/**
 * The protocol, described once: every request method with its params schema,
 * result schema, lifecycle-gate family and the generations that send it;
 * every notification with its params. The server's handlers, the client's
 * calls and both executors are typed from this table, and the JSON Schema in
 * `schema/` is generated from it. To add a method, add an entry here.
 */
import type { z } from 'zod/mini';
import type { Base64Payload } from './base64-payload.js';
import { BOTH, type GateFamily, type MethodSpec, type ResultName } from './method-spec.js';
import { type ResultSchemas, resultSchemas } from './results.js';
import * as P from './schemas.js';

/** A table row; its params schema is built when first read (see `once` in `schemas.ts`). */
const spec = <Params extends z.ZodMiniType, Result extends ResultName, Family extends GateFamily | undefined>(
  value: Omit<MethodSpec<Params, Result, Family>, 'params'> & { params: () => Params },
): MethodSpec<Params, Result, Family> => {
  const { params, ...rest } = value;
  return {
    ...rest,
    get params() {
      return params();
    },
  };
};

export const Methods = {
  initialize: spec({
    params: P.InitializeParams,
    struct: 'InitializeParams',
    result: 'InitializeResult',
    family: undefined,
    generations: BOTH,
    retry: 'never',
    summary: 'Opens the session; once per connection.',
  }),
  'process/start': spec({
    params: P.ProcessStartParams,
    struct: 'ExecParams',
    structV2: 'WireExecParams',
    result: 'ProcessStartResult',
    family: 'exec',
    generations: BOTH,
    retry: 'never',
    summary: 'Starts a process on pipes or a PTY.',
  }),
  'process/read': spec({
    params: P.ProcessReadParams,
    struct: 'ReadParams',
    result: 'ProcessReadResult',
    family: 'exec',
    generations: BOTH,
    retry: 'safe',
    summary: 'Reads retained output after a seq, optionally waiting for more.',
  }),
  'process/write': spec({
    params: P.ProcessWriteParams,
    struct: 'WriteParams',
    result: 'ProcessWriteResult',
    family: 'exec',
    generations: BOTH,
    retry: 'withWriteId',
    summary: "Writes to a process's stdin (once per writeId).",
  }),
  'process/terminate': spec({
    params: P.ProcessIdParams,
    struct: 'TerminateParams',
    result: 'ProcessTerminateResult',
    family: 'exec',
    generations: BOTH,
    retry: 'never',
    summary: "Kills a process's whole tree.",
  }),
  'process/resize': spec({
    params: P.ProcessResizeParams,
    struct: 'ResizeParams',
    result: 'EmptyResult',
    family: 'exec',
    generations: BOTH,
    retry: 'safe',
    summary: "Resizes a PTY process's terminal.",
  }),
  'process/signal': spec({
    params: P.ProcessSignalParams,
    struct: 'SignalParams',
    result: 'EmptyResult',
    family: 'exec',
    generations: BOTH,
    retry: 'never',
    summary: "Sends a signal to a process's group (an extension in generation 1).",
  }),
  'environment/info': spec({
    params: P.EnvironmentInfoParams,
    struct: 'EnvironmentInfoParams',
    result: 'EnvironmentInfo',
    family: 'environment',
    generations: BOTH,
    retry: 'safe',
    summary: 'Describes the machine: shell, cwd, platform, capabilities (an extension in generation 1).',
  }),
  'environment/status': spec({
    params: P.EnvironmentInfoParams,
    struct: 'EnvironmentStatusParams',
    result: 'EnvironmentStatusResult',
    family: 'environment',
    generations: [2],
    retry: 'safe',
    summary: 'Says whether the environment is ready.',
  }),
  'fs/readFile': spec({
    params: P.FsPathParams,
    struct: 'FsReadFileParams',
    structV2: 'WireFsReadFileParams',
    result: 'FsReadFileResult',
    family: 'filesystem',
    generations: BOTH,
    retry: 'safe',
    summary: 'Reads a whole file.',
  }),
  'fs/writeFile': spec({
    params: P.FsWriteFileParams,
    struct: 'FsWriteFileParams',
    structV2: 'WireFsWriteFileParams',
    result: 'EmptyResult',
    family: 'filesystem',
    generations: BOTH,
    retry: 'never',
    summary: 'Writes a whole file.',
  }),
  'fs/createDirectory': spec({
    params: P.FsCreateDirectoryParams,
    struct: 'FsCreateDirectoryParams',
    structV2: 'WireFsCreateDirectoryParams',
    result: 'EmptyResult',
    family: 'filesystem',
    generations: BOTH,
    retry: 'never',
    summary: 'Creates a directory (recursively by default).',
  }),
  'fs/getMetadata': spec({
    params: P.FsPathParams,
    struct: 'FsGetMetadataParams',
    structV2: 'WireFsGetMetadataParams',
    result: 'FsMetadataResult',
    family: 'filesystem',
    generations: BOTH,
    retry: 'safe',
    summary: 'Stats a path.',
  }),
  'fs/readDirectory': spec({
    params: P.FsPathParams,
    struct: 'FsReadDirectoryParams',
    structV2: 'WireFsReadDirectoryParams',
    result: 'FsReadDirectoryResult',
    family: 'filesystem',
    generations: BOTH,
    retry: 'safe',
    summary: 'Lists a directory.',
  }),
  'fs/remove': spec({
    params: P.FsRemoveParams,
    struct: 'FsRemoveParams',
    structV2: 'WireFsRemoveParams',
    result: 'EmptyResult',
    family: 'filesystem',
    generations: BOTH,
    retry: 'never',
    summary: 'Removes a file or tree.',
  }),
  'fs/copy': spec({
    params: P.FsCopyParams,
    struct: 'FsCopyParams',
    structV2: 'WireFsCopyParams',
    result: 'EmptyResult',
    family: 'filesystem',
    generations: BOTH,
    retry: 'never',
    summary: 'Copies a file, symlink or tree.',
  }),
  'fs/canonicalize': spec({
    params: P.FsPathParams,
    struct: 'FsCanonicalizeParams',
    structV2: 'WireFsCanonicalizeParams',
    result: 'FsCanonicalizeResult',
    family: 'filesystem',
    generations: BOTH,
    retry: 'safe',
    summary: 'Resolves a path to its canonical form.',
  }),
  'fs/walk': spec({
    params: P.FsWalkParams,
    struct: 'WireFsWalkParams',
    result: 'FsWalkResult',
    family: 'filesystem',
    generations: [2],
    retry: 'safe',
    summary: 'Lists a tree breadth-first, within limits.',
  }),
  'fs/open': spec({
    params: P.FsOpenParams,
    struct: 'WireFsOpenParams',
    result: 'FsOpenResult',
    family: 'filesystem',
    generations: [2],
    retry: 'never',
    summary: 'Opens a file for block reads, or truncates it for block writes (mode replace).',
  }),
  'fs/readBlock': spec({
    params: P.FsReadBlockParams,
    struct: 'FsReadBlockParams',
    result: 'FsReadBlockResult',
    family: 'filesystem',
    generations: [2],
    retry: 'never',
    summary: 'Reads up to 1 MiB at an offset of an open file.',
  }),
  'fs/writeBlock': spec({
    params: P.FsWriteBlockParams,
    struct: 'FsWriteBlockParams',
    result: 'EmptyResult',
    family: 'filesystem',
    generations: [2],
    retry: 'never',
    summary: 'Writes up to 1 MiB at an offset of a file opened with mode replace.',
  }),
  'fs/close': spec({
    params: P.FsCloseParams,
    struct: 'FsCloseParams',
    result: 'EmptyResult',
    family: 'filesystem',
    generations: [2],
    retry: 'never',
    summary: 'Closes a file handle (always succeeds).',
  }),
  'fs/watchMissing': spec({
    params: P.FsWatchMissingParams,
    struct: 'FsWatchMissingParams',
    result: 'FsWatchMissingResult',
    family: 'filesystem',
    generations: [2],
    retry: 'never',
    summary: 'Watches for missing paths to appear (or a present one to go): one watch per connection, one notification.',
  }),
  'http/request': spec({
    params: P.HttpRequestParams,
    struct: 'HttpRequestParams',
    result: 'HttpRequestResult',
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
export type ResultOf<M extends MethodName> = z.output<ResultSchemas[(typeof Methods)[M]['result']]>;

/** A method's result schema. */
export function resultSchemaOf(method: MethodName): z.ZodMiniType {
  return resultSchemas()[Methods[method].result];
}
/** The members that may carry a whole file, block or body. */
type PayloadMember = 'dataBase64' | 'bodyBase64' | 'chunk';
/**
 * A result as the server's handlers produce it, and as an in-process caller
 * gets it: a payload member may be a `Base64Payload` (streamed onto the wire
 * without building the string, see `transport/line-writer.ts`).
 */
export type ProducedResultOf<M extends MethodName> = {
  [K in keyof ResultOf<M>]: K extends PayloadMember ? ResultOf<M>[K] | Base64Payload : ResultOf<M>[K];
};

/**
 * Params as a caller may hand them over: a payload member may be a
 * `Base64Payload`, whose bytes the line writer base64-encodes straight onto
 * the wire and an in-process session takes as they are.
 */
export type SentParamsOf<M extends MethodName> = {
  [K in keyof ParamsOf<M>]: K extends PayloadMember ? ParamsOf<M>[K] | Base64Payload : ParamsOf<M>[K];
};

export function isMethodName(name: string): name is MethodName {
  return Object.hasOwn(Methods, name);
}
