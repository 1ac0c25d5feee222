/**
 * Params schemas for every method (PROTOCOL.md §0), with zod.
 *
 * Unknown members are ignored (zod strips them), optional members accept
 * absence or `null` (except `pipeStdin`, as in the reference). Leaf error
 * messages are serde's expected-type words; see `decode.ts`.
 */
import path from 'node:path';
import * as z from 'zod/mini';
import { describeValue2, LITERAL, VARIANT } from './decode.js';
import { ErrorTexts } from './errors.js';
import { fileUriToPath, isFileUri, nativePath, type ClientPath } from './path-uri.js';
import { taggedEnum } from './tagged-enum.js';

/**
 * A schema built on first use, then kept. Building every schema costs
 * milliseconds at each start, and a session uses a few of them
 * (`npm run bench -- --only startup`).
 */
function once<T extends z.ZodMiniType>(build: () => T): () => T {
  let built: T | undefined;
  return () => {
    built ??= build();
    return built;
  };
}

const expecting = (label: string) => ({ error: () => label });
const literal = (message: string) => ({ error: () => `${LITERAL}${message}` });

const str = () => z.string(expecting('a string'));
const bool = () => z.boolean(expecting('a boolean'));
/**
 * serde's u64 / usize: an integer from 0 to 2^64 − 1. JSON.parse rounds one above 2^53 − 1; a
 * field that must be exact refuses it (an id here, with `exactUnsigned`; a block's offset in
 * `server/fs/file-handles.ts`), the others work with the rounded value. The largest ones
 * (`u64::MAX`: "wait for ever") round to 2^64, so 2^64 passes (a true 2^64 cannot be told apart).
 */
const unsigned = (label: 'u64' | 'usize') =>
  z.number(expecting(label)).check(z.minimum(0, expecting(label)), z.lte(2 ** 64, expecting(label)), z.multipleOf(1, expecting(label)));
const exactUnsigned = () =>
  unsigned('u64').check(
    z.refine((value) => value <= Number.MAX_SAFE_INTEGER, {
      error: () => `${VARIANT}above 2^53 - 1, which this server cannot address exactly`,
    }),
  );
const strings = () => z.array(str(), expecting('a sequence'));
/**
 * A map of strings, into an object without a prototype: a member named `__proto__` is a variable
 * like any other (`z.record` assigns members, and that one set the object's prototype instead).
 */
const stringMap = () =>
  z.pipe(
    z
      .custom<Record<string, string>>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), expecting('a map'))
      .register(z.globalRegistry, { type: 'object', propertyNames: { type: 'string' }, additionalProperties: { type: 'string' } }),
    z.transform((map: Record<string, string>, context): Record<string, string> => {
      const strings: Record<string, string> = Object.create(null);
      // The check above took any map: its values are checked here.
      for (const [key, value] of Object.entries(map)) {
        if (typeof value === 'string') strings[key] = value;
        else context.issues.push({ code: 'custom', message: 'a string', path: [key], input: value });
      }
      return strings;
    }),
  );

/**
 * A native absolute path (generation 1) or a `file://` URI (generation 2).
 * A malformed URI throws its `ProtocolError` from the transform: the
 * reference answers some of them −32600, which a schema issue cannot say.
 */
const absolutePath = () =>
  z.pipe(
    z
      .string(expecting('path string'))
      .check(z.refine((value) => isFileUri(value) || path.posix.isAbsolute(value), literal(ErrorTexts.relativePath))),
    z.transform(
      (value: string): ClientPath =>
        isFileUri(value) ? { native: fileUriToPath(value), uri: true } : { native: nativePath(value), uri: false },
    ),
  );

/** `cwd`: any string (relative resolves against the server's cwd), or a `file://` URI. */
const directory = () =>
  z.pipe(
    str(),
    z.transform((value: string) => (isFileUri(value) ? fileUriToPath(value, 'cwd') : value)),
  );

/** Checked by `unsupported-requests.ts`: absent, null or disabled means no confinement. */
const noSandbox = () => z.optional(z.unknown());

const dimension = (message: string) =>
  z.number(expecting('u16')).check(z.refine((value) => Number.isInteger(value) && value >= 1 && value <= 65535, literal(message)));

export const InitializeParams = once(() =>
  z.object({ clientName: str(), resumeSessionId: z.nullish(str()) }, expecting('struct InitializeParams')),
);

const TerminalSize = once(() =>
  z.object(
    {
      rows: dimension(ErrorTexts.badSize),
      cols: dimension(ErrorTexts.badSize),
    },
    expecting('struct TerminalSize'),
  ),
);

const INHERIT = ['core', 'all', 'none'] as const; // the reference's order, in its message

const EnvPolicy = once(() =>
  z.object(
    {
      // A unit enum to serde: the name or a map from it to null (both references take `{"none": null}`).
      inherit: taggedEnum(INHERIT, `one of ${INHERIT.map((v) => `\`${v}\``).join(', ')}`),
      ignoreDefaultExcludes: bool(),
      exclude: strings(),
      set: stringMap(),
      includeOnly: strings(),
    },
    expecting('struct ExecEnvPolicy'),
  ),
);

/**
 * What Codex sends beside the process itself. Anything that asks for more
 * than this server does is refused by `unsupported-requests.ts`, never ignored.
 */
const codexExtras = () => ({
  sandbox: z.optional(z.unknown()),
  metadata: z.optional(z.unknown()), // checked in generation 2 only: see exec-metadata.ts
  enforceManagedNetwork: z.optional(bool()), // `true` is refused by `unsupported-requests.ts`
  managedNetwork: z.optional(z.unknown()),
  networkProxy: z.optional(z.unknown()),
  shellSnapshot: z.optional(z.unknown()),
  credentialProviders: z.optional(z.unknown()),
});

export const ProcessStartParams = once(() =>
  z.object(
    {
      processId: str(),
      argv: strings(),
      cwd: directory(),
      env: stringMap(),
      tty: bool(),
      pipeStdin: z.optional(bool()),
      arg0: z.nullish(str()),
      envPolicy: z.nullish(EnvPolicy()),
      size: z.nullish(TerminalSize()),
      ...codexExtras(),
    },
    expecting('struct ExecParams'),
  ),
);

export const ProcessReadParams = once(() =>
  z.object(
    {
      processId: str(),
      afterSeq: z.nullish(unsigned('u64')),
      maxBytes: z.nullish(unsigned('usize')),
      waitMs: z.nullish(unsigned('u64')),
    },
    expecting('struct ReadParams'),
  ),
);

export const ProcessWriteParams = once(() =>
  z.object({ processId: str(), chunk: str(), closeStdin: z.nullish(bool()), writeId: z.nullish(str()) }, expecting('struct WriteParams')),
);

export const ProcessIdParams = once(() => z.object({ processId: str() }, expecting('struct TerminateParams')));

export const ProcessResizeParams = once(() =>
  z.object(
    {
      processId: str(),
      rows: dimension(ErrorTexts.badResize),
      cols: dimension(ErrorTexts.badResize),
    },
    expecting('struct ResizeParams'),
  ),
);

/** The signal's name: generation 1 names any signal (our extension), generation 2 only `interrupt`, checked by the handler. */
export const ProcessSignalParams = once(() =>
  z.object({ processId: str(), signal: taggedEnum<readonly [string]>(undefined, '') }, expecting('struct SignalParams')),
);

/** No params: `null`, none or `{}` (generation 2 sends `null`, generation 1 `{}`); anything else is not serde's unit. */
export const EnvironmentInfoParams = once(() =>
  z.unknown().check(
    z.refine((value) => value == null || (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0), {
      error: (issue) => `${LITERAL}invalid type: ${describeValue2(issue.input)}, expected unit`,
    }),
  ),
);

export const InitializedParams = once(() => z.object({}));

export const FsPathParams = once(() => z.object({ path: absolutePath(), sandbox: noSandbox() }, expecting('struct FsPathParams')));

export const FsWriteFileParams = once(() =>
  z.object({ path: absolutePath(), dataBase64: str(), sandbox: noSandbox() }, expecting('struct FsWriteFileParams')),
);

export const FsCreateDirectoryParams = once(() =>
  z.object({ path: absolutePath(), recursive: z.nullish(bool()), sandbox: noSandbox() }, expecting('struct FsCreateDirectoryParams')),
);

export const FsRemoveParams = once(() =>
  z.object(
    { path: absolutePath(), recursive: z.nullish(bool()), force: z.nullish(bool()), sandbox: noSandbox() },
    expecting('struct FsRemoveParams'),
  ),
);

export const FsCopyParams = once(() =>
  z.object(
    { sourcePath: absolutePath(), destinationPath: absolutePath(), recursive: bool(), sandbox: noSandbox() },
    expecting('struct FsCopyParams'),
  ),
);

const WalkOptions = once(() =>
  z.object(
    {
      maxDepth: unsigned('usize'),
      maxDirectories: unsigned('usize'),
      maxEntries: unsigned('usize'),
      followDirectorySymlinks: bool(),
      // Absent is taken (serde default), null is not.
      pruneHiddenDirectories: z.optional(bool()),
    },
    expecting('struct WalkOptions'),
  ),
);

/** Generation 2 (Codex 0.169); limits are checked by `server/fs/walk.ts`. */
export const FsWalkParams = once(() =>
  z.object({ path: absolutePath(), options: WalkOptions(), sandbox: noSandbox() }, expecting('struct WireFsWalkParams')),
);

const OPEN_MODES = ['read', 'replace'] as const;

/** Generation 2: absent means read. */
const OpenMode = once(() => taggedEnum(OPEN_MODES, '`read` or `replace`'));

export const FsOpenParams = once(() =>
  z.object(
    { handleId: str(), path: absolutePath(), mode: z.optional(OpenMode()), sandbox: noSandbox() },
    expecting('struct WireFsOpenParams'),
  ),
);

export const FsReadBlockParams = once(() =>
  z.object({ handleId: str(), offset: unsigned('u64'), len: unsigned('u64') }, expecting('struct FsReadBlockParams')),
);

export const FsWriteBlockParams = once(() =>
  z.object({ handleId: str(), offset: unsigned('u64'), chunk: str() }, expecting('struct FsWriteBlockParams')),
);

/** Generation 2: `present` is one path, not a list. */
export const FsWatchMissingParams = once(() =>
  z.object(
    { watchId: exactUnsigned(), missing: z.array(absolutePath(), expecting('a sequence')), present: z.nullish(absolutePath()) },
    expecting('struct FsWatchMissingParams'),
  ),
);

export const FsCloseParams = once(() => z.object({ handleId: str() }, expecting('struct FsCloseParams')));

/** `valueEnvVar` (generation 2): the header's value continues with that variable of the server's environment. */
const HttpHeader = once(() => z.object({ name: str(), value: str(), valueEnvVar: z.nullish(str()) }, expecting('struct HttpHeader')));

const REDIRECT_POLICIES = ['follow', 'stop'] as const;

/** Generation 2. */
const RedirectPolicy = once(() => taggedEnum(REDIRECT_POLICIES, '`follow` or `stop`'));

export const HttpRequestParams = once(() =>
  z.object(
    {
      method: str(),
      url: str(),
      requestId: str(),
      headers: z.optional(z.array(HttpHeader(), expecting('a sequence'))),
      bodyBase64: z.nullish(str()),
      timeoutMs: z.nullish(unsigned('u64')),
      streamResponse: z.optional(bool()),
      redirectPolicy: z.optional(RedirectPolicy()),
    },
    expecting('struct HttpRequestParams'),
  ),
);
