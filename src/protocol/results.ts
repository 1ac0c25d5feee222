/**
 * Result and notification schemas (PROTOCOL.md §0, PROTOCOL-V2.md §1).
 *
 * They are not checked at run time: they type the server's handlers and the
 * client's calls (a handler whose answer does not match fails to compile)
 * and they generate the published JSON Schema (`npm run schema`). Members a
 * generation-2 client alone receives are optional. They are built on first
 * use, so that a server, which never uses them, does not build them at start.
 */
import * as z from 'zod/mini';

function build() {
  const empty = () => z.strictObject({});
  const nullable = <T extends z.ZodMiniType>(schema: T) => z.nullable(schema);

  /** An event's number in its process (or streamed body): from 1 up. */
  const Seq = z.int().check(z.positive());
  const OutputStream = z.enum(['stdout', 'stderr', 'pty']);
  const WriteStatus = z.enum(['accepted', 'unknownProcess', 'stdinClosed', 'starting']);
  /** Codex's name for how a start was confined: a Linux sandbox, or none. */
  const SandboxType = z.enum(['none', 'linuxSeccomp']);

  /** The machine a server runs on (PROTOCOL-V2.md §1c), in `initialize` and `environment/info`. */
  const EnvironmentInfo = z.object({
    shell: z.object({ name: z.string(), path: z.string() }),
    /** A native path (generation 1) or a `file://` URI (generation 2); the client's `environmentInfo()` gives native paths. */
    cwd: z.string(),
    executorVersion: z.string(),
    /** `file://` URIs; no `userHomeDir` when the server's `HOME` is a relative path (Codex's servers leave it out too). */
    userHomeDir: z.optional(z.string()),
    platformOs: z.string(),
    tempDir: z.string(),
    /** Generation 2 clients decide from these what they may send. */
    capabilities: z.record(z.string(), z.boolean()),
    /** Codex's own servers add these. */
    providerId: z.optional(z.string()),
    prependPathDirs: z.optional(z.array(z.string())),
    temporaryDirectories: z.optional(z.array(z.string())),
    /** This server's additions (its generation-1 `environment/info`). */
    platform: z.optional(z.string()),
    arch: z.optional(z.string()),
    homeDir: z.optional(z.string()),
    pid: z.optional(z.number()),
    /** Whether sandbox policies can be enforced here (this server's addition). */
    sandbox: z.optional(z.object({ available: z.boolean(), type: z.literal('linuxSeccomp'), reason: z.optional(z.string()) })),
  });

  const InitializeResult = z.object({
    sessionId: z.string(),
    /** Servers of generation 2 describe their environment here; generation 1 servers do not. */
    environmentInfo: z.optional(EnvironmentInfo),
  });

  const ProcessStartResult = z.object({ processId: z.string(), sandboxType: z.optional(SandboxType) });

  const ProcessOutputChunk = z.object({
    seq: Seq,
    stream: OutputStream,
    /** base64 */
    chunk: z.string(),
  });

  const ProcessReadResult = z.object({
    chunks: z.array(ProcessOutputChunk),
    nextSeq: z.number(),
    exited: z.boolean(),
    exitCode: nullable(z.number()),
    closed: z.boolean(),
    failure: nullable(z.string()),
    /** Generation 2: whether the sandbox made the command fail. */
    sandboxDenied: z.optional(z.boolean()),
  });

  const ProcessWriteResult = z.object({ status: WriteStatus });
  const ProcessTerminateResult = z.object({ running: z.boolean() });
  const EmptyResult = empty();
  const EnvironmentStatusResult = z.object({ status: z.literal('ready') });

  const FsReadFileResult = z.object({ /** base64 */ dataBase64: z.string() });
  const FsMetadataResult = z.object({
    isDirectory: z.boolean(),
    isFile: z.boolean(),
    isSymlink: z.boolean(),
    createdAtMs: z.number(),
    modifiedAtMs: z.number(),
    /** Generation 2: bytes of the target (of the link's target for a symlink). */
    size: z.optional(z.number()),
  });
  const FsDirectoryEntry = z.object({ fileName: z.string(), isDirectory: z.boolean(), isFile: z.boolean() });
  const FsReadDirectoryResult = z.object({ entries: z.array(FsDirectoryEntry) });
  const FsCanonicalizeResult = z.object({ path: z.string() });

  const FsWalkResult = z.object({
    /** Breadth-first, each directory's names sorted bytewise; the root is not listed. */
    entries: z.array(z.object({ path: z.string(), kind: z.enum(['file', 'directory']) })),
    /** Directories (or entries) that could not be read, with the OS error's text. */
    errors: z.array(z.object({ path: z.string(), message: z.string() })),
    /** A limit on entries or directories cut the walk short (the depth limit never does). */
    truncated: z.boolean(),
  });

  const FsOpenResult = z.object({ handleId: z.string() });
  const FsReadBlockResult = z.object({
    /** base64, at most the `len` asked for */
    chunk: z.string(),
    /** Fewer bytes came back than asked: the end of the file was reached. */
    eof: z.boolean(),
  });

  const FsWatchMissingResult = z.object({ watching: z.boolean() });
  const FsMissingChangedNotification = z.object({ watchId: z.number() });

  const HttpHeader = z.object({ name: z.string(), value: z.string() });
  const HttpRequestResult = z.object({
    status: z.number(),
    headers: z.array(HttpHeader),
    /** The whole body (base64), or "" when the body streams as `http/request/bodyDelta`. */
    bodyBase64: z.string(),
  });

  // ---- notifications ----

  const ProcessOutputNotification = z.extend(ProcessOutputChunk, { processId: z.string() });
  const ProcessExitedNotification = z.object({
    processId: z.string(),
    seq: Seq,
    exitCode: z.int(),
    /** Generation 2 only. */
    sandboxDenied: z.optional(z.boolean()),
  });
  const ProcessClosedNotification = z.object({ processId: z.string(), seq: Seq });
  const HttpBodyDeltaNotification = z.object({
    requestId: z.string(),
    seq: Seq,
    deltaBase64: z.string(),
    done: z.boolean(),
    error: nullable(z.string()),
  });
  return {
    OutputStream,
    WriteStatus,
    SandboxType,
    EnvironmentInfo,
    InitializeResult,
    ProcessStartResult,
    ProcessOutputChunk,
    ProcessReadResult,
    ProcessWriteResult,
    ProcessTerminateResult,
    EmptyResult,
    EnvironmentStatusResult,
    FsReadFileResult,
    FsMetadataResult,
    FsDirectoryEntry,
    FsReadDirectoryResult,
    FsCanonicalizeResult,
    FsWalkResult,
    FsOpenResult,
    FsReadBlockResult,
    FsWatchMissingResult,
    FsMissingChangedNotification,
    HttpHeader,
    HttpRequestResult,
    ProcessOutputNotification,
    ProcessExitedNotification,
    ProcessClosedNotification,
    HttpBodyDeltaNotification,
  };
}

export type ResultSchemas = ReturnType<typeof build>;
let built: ResultSchemas | undefined;

/** Every result and notification schema, built on the first call. */
export function resultSchemas(): ResultSchemas {
  built ??= build();
  return built;
}
