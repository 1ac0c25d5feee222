/**
 * fast-check arbitraries for input lines: requests for every method, valid
 * or mutated (wrong types, missing and extra members, huge and negative
 * numbers, NUL and lone surrogates), framed in every way a broken client
 * might (ids of each JSON type, batches, truncation, invalid UTF-8, deep
 * nesting, client responses and notifications).
 *
 * Safety: the server really runs what it is sent. Paths stay inside the
 * test's directory, programs come from a harmless list (never a shell, so no
 * generated text is ever run as code) and URLs point at a closed loopback
 * port or are malformed, so no case can touch anything outside the test.
 */
import fc from 'fast-check';

/**
 * One generated line, its bytes kept as a latin1 string so that a failing
 * case prints readably; `usableId` is set when exactly one answer is owed.
 */
export interface FuzzLine {
  latin1: string;
  usableId?: string | number;
}

const line = (bytes: Buffer, usableId?: string | number): FuzzLine => ({
  latin1: bytes.toString('latin1'),
  ...(usableId === undefined ? {} : { usableId }),
});

const PATH_KEYS = new Set(['path', 'sourcePath', 'destinationPath', 'cwd']);
const PROGRAMS = ['true', 'false', 'echo', 'printf', 'sleep', '/bin/echo', 'fuzz-no-such-program', '/nonexistent/x', ''];
const PROCESS_IDS = ['p1', 'p1', 'p2', 'p2', 'p3', '', 'ü-id'];
const SIGNALS = ['SIGTERM', 'SIGKILL', 'SIGINT', 'SIGSTOP', 'SIGCONT', 'TERM', 'NOPE', ''];

const nasty = fc.constantFrom('\u0000', '\ud800', '\udfff', 'a\u0000b', '\u2028', 'é', '🎵', '\\', '"', '\n', ' ');
const text = fc.oneof(fc.string({ maxLength: 12 }), nasty, fc.string({ unit: 'binary', maxLength: 8 }));
const number = fc.oneof(
  fc.integer({ min: -5, max: 70000 }),
  fc.constantFrom(-1, 0, 1, 65535, 65536, 2 ** 31, 2 ** 53, -(2 ** 63), 1e308, 0.5, -0.0, 2 ** 64), // 2 ** 64: u64::MAX + 1 as JSON sees it
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
/** Any JSON value, some deeply nested. */
const junk: fc.Arbitrary<unknown> = fc.oneof(
  { depthSize: 'small' },
  fc.jsonValue({ maxDepth: 3 }),
  number,
  text,
  fc.constant(null),
  fc.integer({ min: 50, max: 400 }).map((depth) => JSON.parse('['.repeat(depth) + ']'.repeat(depth))),
);

/** A path under `root` (never outside it), or a relative one. */
const pathIn = (root: string) =>
  fc.oneof(
    fc.stringMatching(/^[a-z0-9_-]{0,8}$/).map((name) => `${root}/${name}`),
    fc.constantFrom(`${root}/sub/deeper`, `${root}/ü name`, `${root}/missing/x`, 'relative/path', '', root),
  );
const base64 = fc.oneof(
  fc.uint8Array({ maxLength: 32 }).map((bytes) => Buffer.from(bytes).toString('base64')),
  text,
);
const env = fc.dictionary(
  fc.oneof(fc.stringMatching(/^[A-Z_]{1,6}$/), text).filter((key) => key !== 'PATH'),
  text,
  { maxKeys: 3 },
);

function requestParams(root: string): fc.Arbitrary<[string, Record<string, unknown>]> {
  const path = pathIn(root);
  const processId = fc.constantFrom(...PROCESS_IDS);
  const size = fc.record({ rows: number, cols: number });
  const request = (method: string, params: fc.Arbitrary<Record<string, unknown>>) =>
    params.map((p) => [method, p] as [string, Record<string, unknown>]);
  return fc.oneof(
    request(
      'process/start',
      fc.record(
        {
          processId,
          argv: fc.tuple(fc.constantFrom(...PROGRAMS), fc.array(text, { maxLength: 3 })).map(([p, rest]) => [p, ...rest]),
          cwd: path,
          env,
          tty: fc.boolean(),
          pipeStdin: fc.boolean(),
          arg0: fc.option(text),
          size,
        },
        { requiredKeys: ['processId', 'argv', 'cwd', 'env', 'tty'] },
      ),
    ),
    request(
      'process/read',
      fc.record(
        { processId, afterSeq: number, maxBytes: number, waitMs: fc.integer({ min: 0, max: 20 }) },
        { requiredKeys: ['processId'] },
      ),
    ),
    request('process/write', fc.record({ processId, chunk: base64, closeStdin: fc.boolean() }, { requiredKeys: ['processId', 'chunk'] })),
    request('process/terminate', fc.record({ processId })),
    request('process/resize', fc.record({ processId, rows: number, cols: number })),
    request('process/signal', fc.record({ processId, signal: fc.constantFrom(...SIGNALS) })),
    request('fs/readFile', fc.record({ path })),
    request('fs/writeFile', fc.record({ path, dataBase64: base64 })),
    request('fs/createDirectory', fc.record({ path, recursive: fc.boolean() }, { requiredKeys: ['path'] })),
    request('fs/getMetadata', fc.record({ path })),
    request('fs/readDirectory', fc.record({ path })),
    request('fs/remove', fc.record({ path, recursive: fc.boolean(), force: fc.boolean() }, { requiredKeys: ['path'] })),
    request('fs/copy', fc.record({ sourcePath: path, destinationPath: path, recursive: fc.boolean() })),
    request('fs/canonicalize', fc.record({ path })),
    request('environment/info', fc.constant({})),
    request(
      'http/request',
      fc.record(
        {
          method: fc.constantFrom('GET', 'POST', 'BAD METHOD', ''),
          url: fc.constantFrom('http://127.0.0.1:9/', 'ftp://127.0.0.1/', 'not a url', '', 'http://[::1]:9/x'),
          requestId: fc.constantFrom('h1', 'h2'),
          headers: fc.array(fc.record({ name: text, value: text }), { maxLength: 2 }),
          bodyBase64: base64,
          timeoutMs: fc.integer({ min: 0, max: 50 }),
          streamResponse: fc.boolean(),
        },
        { requiredKeys: ['method', 'url', 'requestId'] },
      ),
    ),
    request('initialize', fc.record({ clientName: text })),
    request('no/such/method', fc.constant({})),
  );
}

/** A mutation of one params object; path-like members only ever get non-strings or confined paths. */
function mutated(root: string, params: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys(params);
  const safeJunk = (key: string) =>
    PATH_KEYS.has(key)
      ? fc.oneof(
          junk.filter((v) => typeof v !== 'string'),
          pathIn(root),
        )
      : junk;
  const options: Array<fc.WeightedArbitrary<unknown>> = [
    { weight: 4, arbitrary: fc.constant(params) },
    { weight: 1, arbitrary: fc.record({ extra: junk, sandbox: fc.constantFrom(null, {}, 'x') }).map((extra) => ({ ...params, ...extra })) },
    { weight: 1, arbitrary: junk.filter((v) => typeof v !== 'string' || !v.startsWith('/')) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  ];
  if (keys.length > 0) {
    const key = fc.constantFrom(...keys);
    options.push({ weight: 1, arbitrary: key.map((k) => Object.fromEntries(Object.entries(params).filter(([name]) => name !== k))) });
    options.push({ weight: 2, arbitrary: key.chain((k) => safeJunk(k).map((value) => ({ ...params, [k]: value }))) });
  }
  return fc.oneof(...options);
}

/** Serializes with lone surrogates kept raw, as a broken client might (JSON.stringify escapes them). */
function encode(message: unknown): Buffer {
  return Buffer.from(JSON.stringify(message) ?? 'null');
}

/** One line and whether an answer to a unique id is owed. */
export function fuzzLine(root: string, nextId: () => number): fc.Arbitrary<FuzzLine> {
  const message = requestParams(root).chain(([method, params]) =>
    mutated(root, params).map((p) => (p === undefined ? { method } : { method, params: p })),
  );
  return fc.oneof(
    { weight: 6, arbitrary: message.map((m) => withUsableId(m, nextId)) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(message, fc.constantFrom(null, true, {}, [], 1.5, -1, '', Number.POSITIVE_INFINITY, 'dup'))
        .map(([m, id]) => line(encode({ ...m, id }))),
    },
    { weight: 1, arbitrary: message.map((m) => line(encode(m))) },
    { weight: 1, arbitrary: fc.array(message, { maxLength: 3 }).map((batch) => line(encode(batch.map((m, i) => ({ ...m, id: i }))))) },
    {
      weight: 1,
      arbitrary: fc.tuple(message, fc.nat()).map(([m, cut]) => {
        const bytes = encode({ ...m, id: 'cut' });
        return line(bytes.subarray(0, cut % Math.max(bytes.length, 1)));
      }),
    },
    {
      weight: 1,
      arbitrary: fc.uint8Array({ minLength: 1, maxLength: 40 }).map((bytes) => line(Buffer.from(bytes.filter((b) => b !== 10)))),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(message, fc.uint8Array({ minLength: 1, maxLength: 3 })).map(([m, bad]) => withInvalidUtf8(m, bad, nextId)),
    },
    { weight: 1, arbitrary: fc.record({ id: fc.oneof(fc.nat(), text), result: junk }).map((m) => line(encode(m))) },
    { weight: 1, arbitrary: fc.record({ method: text, params: junk }).map((m) => line(encode(m))) },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 1000, max: 20000 })
        .map((depth) => line(Buffer.from(`{"id":"deep","method":"fs/getMetadata","params":${'['.repeat(depth)}${']'.repeat(depth)}}`))),
    },
  );
}

function withUsableId(message: object, nextId: () => number): FuzzLine {
  const n = nextId();
  const id = n % 2 === 0 ? 10_000_000 + n : `fz-${n}`; // clear of ServerProcess's own ids
  const bytes = encode({ ...message, id });
  // A lone surrogate comes out of JSON.stringify as a \u escape, which the server refuses (owed nothing).
  return line(bytes, LONE_SURROGATE_ESCAPE.test(bytes.toString()) ? undefined : id);
}

const LONE_SURROGATE_ESCAPE = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;

/** Bytes that are not UTF-8 inside a string value: the whole line is a parse error, owed nothing. */
function withInvalidUtf8(message: object, bad: Uint8Array, nextId: () => number): FuzzLine {
  const marker = `@@${nextId()}@@`;
  const bytes = encode({ ...message, id: 'utf8', note: marker });
  const at = bytes.indexOf(marker);
  const invalid = Buffer.from(bad.map((b) => 0x80 | (b & 0x3f)));
  return line(Buffer.concat([bytes.subarray(0, at), Buffer.from([0xff]), invalid, bytes.subarray(at + marker.length)]));
}
