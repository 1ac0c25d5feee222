/**
 * Every error the protocol can carry, created in one place.
 *
 * Codes and exact message texts follow PROTOCOL.md (§1.4, §2, §3, §4, §5 and
 * the EXT sections). Handlers throw `ProtocolError`s; the connection turns
 * them into JSON-RPC error responses.
 */

export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  NotFound: -32004,
  /** Codex 0.169's code for resuming a session another connection holds. */
  SessionAttached: -32010,
} as const;

/** A JSON-RPC error as a value: a code and a message (the wire never carries `data`). */
export class ProtocolError extends Error {
  readonly code: number;

  constructor(code: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProtocolError';
    this.code = code;
  }

  toJSON(): { code: number; message: string } {
    return { code: this.code, message: this.message };
  }
}

const invalidRequest = (message: string) => new ProtocolError(ErrorCode.InvalidRequest, message);
const invalidParams = (message: string) => new ProtocolError(ErrorCode.InvalidParams, message);
const internal = (message: string) => new ProtocolError(ErrorCode.InternalError, message);

/**
 * Texts that are not a whole error of their own: the params checks that
 * `schemas.ts` words (sent as −32602), and the `error` of a streamed HTTP
 * body's last `http/request/bodyDelta`.
 */
export const ErrorTexts = {
  relativePath: 'AbsolutePathBuf deserialized without a base path',
  badSize: 'size.rows and size.cols must be integers between 1 and 65535',
  badResize: 'rows and cols must be integers between 1 and 65535',
  bodyDecodeFailed: 'error decoding response body',
  bodyInputClosed: 'exec-server input closed',
} as const;

/** Named constructors for every error the server sends. */
export const Errors = {
  // --- framing (EXT-PARSE, EXT-LIMITS) ---
  parseError: (detail: string) => new ProtocolError(ErrorCode.ParseError, `Parse error: ${detail}`),
  invalidMessage: (detail: string) => invalidRequest(`Invalid Request: ${detail}`),
  batchNotSupported: () => invalidRequest('Invalid Request: batch requests are not supported'),
  lineTooLong: (limit: number) => invalidRequest(`Invalid Request: message exceeds ${limit} bytes`),
  /** A client's: an answer longer than its reader takes fails that request alone. */
  answerTooLong: (limit: number) =>
    invalidRequest(`the answer exceeds ${limit} bytes, the most a client takes (read it in parts: fs/readBlock, a streamed http/request)`),

  // --- lifecycle (§2) ---
  methodNotFound: (method: string) => new ProtocolError(ErrorCode.MethodNotFound, `exec-server stub does not implement \`${method}\` yet`),
  initializeTwice: () => invalidRequest('initialize may only be sent once per connection'),
  unknownSession: (id: string) => invalidRequest(`unknown session id ${id}`),
  sessionAttached: (id: string) => new ProtocolError(ErrorCode.SessionAttached, `session ${id} is already attached to another connection`),
  notInitialized: (family: string) => invalidRequest(`client must call initialize before using ${family} methods`),
  notInitializedNotification: (family: string) => invalidRequest(`client must send initialized before using ${family} methods`),

  /** An unexpected failure inside a handler (a bug, not a protocol case). */
  internal: (detail: string, cause?: unknown) => new ProtocolError(ErrorCode.InternalError, `internal error: ${detail}`, { cause }),

  // --- params (§1.4) ---
  invalidParams,

  // --- processes (§3, EXT) ---
  emptyArgv: () => invalidParams('argv must not be empty'),
  processExists: (id: string) => invalidRequest(`process ${id} already exists`),
  unknownProcess: (id: string) => invalidRequest(`unknown process id ${id}`),
  notATty: (id: string) => invalidRequest(`process ${id} is not a tty`),
  spawnFailed: (message: string) => internal(message),
  nulByte: () => internal('nul byte found in provided data'),
  readDirectoryTooLarge: (count: number, limit: number) => internal(`fs/readDirectory returned ${count} entries; limit is ${limit}`),
  badMetadata: (problem: string) => invalidParams(`metadata: ${problem}`),
  /** Generation 2's words for a NUL its spawn finds: in the environment (`env`, `envPolicy.set`) or the `cwd`. */
  nulByteAtSpawn: () => internal('data provided contains a nul byte'),
  missingProgram: (tty: boolean) => internal(`missing program for ${tty ? 'PTY' : 'pipe'} spawn`),
  stdinWriteFailed: () => internal('failed to write to process stdin'),
  closeStdinOnPty: () => invalidParams('closeStdin is only supported for pipeStdin processes'),
  unsupportedSignal: (value: string) => invalidParams(`unsupported signal \`${value}\``),
  /** Generation 2's words for a signal we do not know: its only variant is `interrupt` (ours are an extension). */
  unknownSignalVariant: (value: string) => invalidParams(`unknown variant \`${value}\`, expected \`interrupt\``),
  unsupportedMember: (member: string, why: string) => invalidParams(`${member} is not supported: ${why}`),
  /** A sandbox policy, or a part of it, that this server cannot enforce: refused, never run unconfined. */
  sandboxUnenforceable: (what: string) => invalidParams(`sandbox is not supported: ${what}; this exec-server cannot enforce it`),
  /** A `sandbox` the reference's parser refuses, in its words (`server/sandbox/sandbox-shape.ts`). */
  invalidSandboxMember: (serdeText: string) => invalidParams(serdeText),

  // --- filesystem (§4) ---
  invalidUri: (detail: string) => invalidParams(`invalid URI: ${detail}`),
  pathInvalidOnPlatform: (value: string) => invalidRequest(`'${value}' is invalid on '${process.platform}'`),
  /** A URI whose path holds a NUL (`%00`): −32602, unlike a host, which is −32600. */
  nulInPathUri: (value: string) => invalidParams(`'${value}' is invalid on '${process.platform}'`),
  uriWithQuery: () => invalidParams('query parameters are not allowed in path URIs'),
  uriWithFragment: () => invalidParams('fragments are not allowed in path URIs'),
  unsupportedUriScheme: (scheme: string) => invalidParams(`unsupported path URI scheme \`${scheme}\``),
  /** A URI names no path on this host: its text (−32600) prefixed for a `cwd`, which the reference answers −32602. */
  cwdUriNotHere: (value: string, reason: string) => invalidParams(`cwd URI \`${value}\` is not valid on this exec-server host: ${reason}`),
  pathNotUtf8: (value: string) => invalidParams(`'${value}' names a path that is not UTF-8, which this server cannot address`),
  emptyWriteId: () => invalidParams('writeId must not be empty'),
  /** Generation 2 requires a `writeId` on every write (a generation-1 client may leave it out). */
  missingWriteId: () => invalidParams('missing field `writeId`'),
  nullWriteId: () => invalidParams('writeId: invalid type: null, expected a string'),
  sandboxUnavailable: () => internal('sandbox unavailable: bwrap not found (install bubblewrap)'),
  /** The bwrap the server was started with (`--bwrap`) is gone or was replaced by something it cannot run. */
  givenBwrapUnusable: (given: string) => internal(`sandbox unavailable: --bwrap ${given} is not an executable file`),
  fileTooLarge: (limit: number) => invalidRequest(`file is too large to read: limit is ${limit} bytes`),
  writeFileBase64: (detail: string) => invalidRequest(`fs/writeFile requires valid base64 dataBase64: ${detail}`),
  copyDirectoryNeedsRecursive: () => invalidRequest('fs/copy requires recursive: true when sourcePath is a directory'),
  copyIntoItself: () => invalidRequest('fs/copy cannot copy a directory to itself or one of its descendants'),
  removeRoot: () => invalidRequest('fs/remove refuses to remove the root directory /'),
  copyUnsupportedType: () => invalidRequest('fs/copy only supports regular files, directories, and symlinks'),
  /** A write the sandbox policy forbids, in the kernel's words (what Codex 0.169 answers). */
  readOnlyFileSystem: () => internal('Read-only file system (os error 30)'),
  notAFile: (native: string) => invalidRequest(`path \`${native}\` is not a file`),
  handleIdTooLong: (limit: number) => invalidRequest(`file handle ID must not exceed ${limit} bytes`),
  handleExists: (id: string) => invalidRequest(`file handle \`${id}\` already exists`),
  tooManyHandles: (limit: number) => invalidRequest(`at most ${limit} file handles may be open per connection`),
  unknownHandle: (id: string) => new ProtocolError(ErrorCode.NotFound, `unknown file handle \`${id}\``),
  readBlockLength: (limit: number) => invalidRequest(`file read block length must be between 1 and ${limit}`),
  writeBlockLength: (limit: number) => invalidRequest(`file write block length must be between 1 and ${limit}`),
  writeBlockRange: () => invalidRequest('file write range exceeds the signed 64-bit file offset limit'),
  /** A u64 above 2^53 − 1 arrives rounded (JSON numbers are doubles): where it must be exact, it is refused. */
  notExact: (field: string) => invalidParams(`${field}: above 2^53 - 1, which this server cannot address exactly`),
  walkLimitsZero: () => invalidRequest('filesystem walk limits must be greater than zero'),
  walkLimitsTooLarge: (depth: number, directories: number, entries: number) =>
    invalidRequest(`filesystem walk limits exceed maximums: depth=${depth}, directories=${directories}, entries=${entries}`),
  /** An OS error from a filesystem call, mapped by errno (§4). */
  osError: (code: number, message: string) => new ProtocolError(code, message),

  // --- http (§5) ---
  httpInvalidUrl: (detail: string) => invalidParams(`http/request url is invalid: ${detail}`),
  httpScheme: (scheme: string) => invalidParams(`http/request only supports http and https URLs, got ${scheme}`),
  httpMethod: () => invalidParams('http/request method is invalid: invalid HTTP method'),
  httpHeaderName: () => invalidParams('http/request header name is invalid: invalid HTTP header name'),
  httpHeaderValue: (name: string) => invalidParams(`http/request header value is invalid for ${name}: failed to parse header value`),
  httpHeaderEnvMissing: (name: string, variable: string) =>
    invalidParams(`http/request header ${name} requires executor environment variable ${variable}`),
  httpHeaderEnvEmpty: (name: string, variable: string) =>
    invalidParams(`http/request header ${name} requires a non-empty executor environment variable ${variable}`),
  httpHeaderUnsendable: (name: string, why: string) =>
    invalidParams(`http/request header ${name} cannot be sent by this exec-server: ${why}`),
  httpStreamActive: (id: string) => invalidParams(`http/request streamResponse requestId \`${id}\` is already active`),
  httpTooMany: (limit: number) =>
    invalidRequest(`at most ${limit} http/request calls may be in flight per connection; wait for one to finish`),
  httpSendFailed: (url: string) => internal(`http/request failed: error sending request for url (${url})`),
  /** Generation 2 with `timeoutMs: 0`: the reference gives up before it sends anything. */
  httpNoTime: () => internal('http/request failed: route-aware request timed out'),
  httpTooManyRedirects: () => internal('http/request failed: too many redirects'),
  httpRedirectScheme: (scheme: string) => internal(`http/request failed: redirect target uses unsupported URL scheme: ${scheme}`),
  // Generation 1's texts for the same (Codex 0.134's HTTP client): `redirect-targets.ts`.
  httpRedirectBuilder: (url: string) => internal(`http/request failed: builder error for url (${url})`),
  httpRedirectFollowFailed: (url: string) => internal(`http/request failed: error following redirect for url (${url})`),
  httpInputEnded: (url: string, graceMs: number) =>
    internal(
      `http/request failed: no answer from ${url} within ${graceMs} ms of the end of input (give the request a timeoutMs to wait longer)`,
    ),
  httpBodyFailed: () => internal('failed to read http/request response body: error decoding response body'),
} as const;
