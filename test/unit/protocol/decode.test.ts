import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeParams, describeValue } from '../../../src/protocol/decode.js';
import { ErrorCode, ProtocolError } from '../../../src/protocol/errors.js';
import {
  FsPathParams,
  HttpRequestParams,
  ProcessReadParams,
  ProcessResizeParams,
  ProcessStartParams,
} from '../../../src/protocol/schemas.js';

/** The error `decodeParams` throws, asserted to be a −32602 ProtocolError unless `code` says otherwise. */
function failure(run: () => unknown, code: number = ErrorCode.InvalidParams): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).code).toBe(code);
    return (error as ProtocolError).message;
  }
  throw new Error('expected decodeParams to throw');
}

const read = (params: unknown) => failure(() => decodeParams(ProcessReadParams(), params, 'ReadParams'));
const START = { processId: 'p', argv: ['sh'], cwd: '/', env: {}, tty: false };
const start = (extra: Record<string, unknown>) => failure(() => decodeParams(ProcessStartParams(), { ...START, ...extra }, 'ExecParams'));

describe('describeValue', () => {
  it.each([
    [null, 'null'],
    [undefined, 'null'],
    [true, 'boolean `true`'],
    [false, 'boolean `false`'],
    [5, 'integer `5`'],
    [-3, 'integer `-3`'],
    [0, 'integer `0`'],
    [1.5, 'floating point `1.5`'],
    [-0.25, 'floating point `-0.25`'],
    ['x', 'string "x"'],
    ['', 'string ""'],
    ['a"b\\c\n', 'string "a\\"b\\\\c\\n"'],
    [[], 'sequence'],
    [[1, 2], 'sequence'],
    [{}, 'map'],
    [{ a: 1 }, 'map'],
  ])('%j -> %s', (value, expected) => {
    expect(describeValue(value)).toBe(expected);
  });

  it('quotes every string as JSON', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(describeValue(s)).toBe(`string ${JSON.stringify(s)}`);
      }),
    );
  });
});

describe('decodeParams: success', () => {
  it('returns the parsed params, dropping unknown members', () => {
    expect(decodeParams(ProcessReadParams(), { processId: 'p', afterSeq: 3, extra: { x: 1 } }, 'ReadParams')).toEqual({
      processId: 'p',
      afterSeq: 3,
    });
  });

  it('accepts null for optional members', () => {
    expect(decodeParams(ProcessReadParams(), { processId: 'p', afterSeq: null, maxBytes: null, waitMs: null }, 'ReadParams')).toEqual({
      processId: 'p',
      afterSeq: null,
      maxBytes: null,
      waitMs: null,
    });
  });

  it('accepts any string processId and any non-negative safe integer for u64 members', () => {
    fc.assert(
      fc.property(fc.string(), fc.nat({ max: Number.MAX_SAFE_INTEGER }), (processId, n) => {
        expect(decodeParams(ProcessReadParams(), { processId, afterSeq: n, maxBytes: n, waitMs: n }, 'ReadParams')).toEqual({
          processId,
          afterSeq: n,
          maxBytes: n,
          waitMs: n,
        });
      }),
    );
  });

  it('accepts u64::MAX and its neighbours, which JSON.parse rounds to 2^64, as the reference does; refuses what rounds above', () => {
    for (const text of ['18446744073709551615', '18446744073709551614', '18446744073709550615']) {
      const params = JSON.parse(`{"processId":"p","afterSeq":${text},"maxBytes":${text},"waitMs":${text}}`);
      expect(decodeParams(ProcessReadParams(), params, 'ReadParams')).toMatchObject({
        afterSeq: 2 ** 64,
        maxBytes: 2 ** 64,
        waitMs: 2 ** 64,
      });
    }
    expect(read(JSON.parse('{"processId":"p","waitMs":18446744073709555000}'))).toMatch(/^waitMs: /);
  });

  it('turns absolute paths and file URIs into client paths', () => {
    expect(decodeParams(FsPathParams(), { path: '/tmp/x' }, 'FsPathParams')).toEqual({ path: { native: '/tmp/x', uri: false } });
    expect(decodeParams(FsPathParams(), { path: 'file:///tmp/a%20b' }, 'FsPathParams')).toEqual({
      path: { native: '/tmp/a b', uri: true },
    });
  });
});

describe('decodeParams: the struct itself', () => {
  it.each([
    [null, 'invalid type: null, expected struct ReadParams'],
    [undefined, 'invalid type: null, expected struct ReadParams'],
    [[], 'invalid type: sequence, expected struct ReadParams'],
    ['x', 'invalid type: string "x", expected struct ReadParams'],
    [7, 'invalid type: integer `7`, expected struct ReadParams'],
    [true, 'invalid type: boolean `true`, expected struct ReadParams'],
  ])('%j -> %s', (params, message) => {
    expect(read(params)).toBe(message);
  });

  it('names the struct it was given', () => {
    expect(failure(() => decodeParams(FsPathParams(), null, 'Anything'))).toBe('invalid type: null, expected struct Anything');
  });
});

describe('decodeParams: fields', () => {
  it('reports a missing field by name', () => {
    expect(read({})).toBe('missing field `processId`');
    expect(read({ afterSeq: 1 })).toBe('missing field `processId`');
    expect(failure(() => decodeParams(FsPathParams(), {}, 'FsPathParams'))).toBe('missing field `path`');
  });

  it('reports wrong types with serde wording', () => {
    expect(read({ processId: 5 })).toBe('processId: invalid type: integer `5`, expected a string');
    expect(read({ processId: null })).toBe('processId: invalid type: null, expected a string');
    expect(read({ processId: [] })).toBe('processId: invalid type: sequence, expected a string');
    expect(read({ processId: {} })).toBe('processId: invalid type: map, expected a string');
    expect(read({ processId: 'p', afterSeq: '1' })).toBe('afterSeq: invalid type: string "1", expected u64');
    expect(read({ processId: 'p', afterSeq: -1.5 })).toBe('afterSeq: invalid type: floating point `-1.5`, expected u64');
    expect(read({ processId: 'p', waitMs: 2.5 })).toBe('waitMs: invalid type: floating point `2.5`, expected u64');
    expect(read({ processId: 'p', maxBytes: true })).toBe('maxBytes: invalid type: boolean `true`, expected usize');
  });

  it('reports negative integers for unsigned members as invalid values', () => {
    expect(read({ processId: 'p', afterSeq: -1 })).toBe('afterSeq: invalid value: integer `-1`, expected u64');
    expect(read({ processId: 'p', maxBytes: -3 })).toBe('maxBytes: invalid value: integer `-3`, expected usize');
    fc.assert(
      fc.property(fc.integer({ min: -1_000_000, max: -1 }), (n) => {
        expect(read({ processId: 'p', waitMs: n })).toBe(`waitMs: invalid value: integer \`${n}\`, expected u64`);
      }),
    );
  });

  it('names the offending field serde meets first: members in the order they came, missing ones last', () => {
    // As both references answer these (compared side by side).
    expect(read({ afterSeq: -1, processId: 5 })).toBe('afterSeq: invalid value: integer `-1`, expected u64');
    expect(read({ processId: 5, afterSeq: -1 })).toBe('processId: invalid type: integer `5`, expected a string');
    expect(read({ afterSeq: 'x' })).toBe('afterSeq: invalid type: string "x", expected u64');
    const policy = { inherit: 'all', exclude: 'x' };
    expect(start({ envPolicy: policy })).toBe('envPolicy.exclude: invalid type: string "x", expected a sequence');
    expect(start({ envPolicy: { inherit: 'all', includeOnly: [1] } })).toBe(
      'envPolicy.includeOnly.0: invalid type: integer `1`, expected a string',
    );
    expect(start({ envPolicy: { inherit: 'core', extra: 1 } })).toBe('envPolicy: missing field `ignoreDefaultExcludes`');
  });

  it('walks into nested structs, maps and sequences', () => {
    expect(start({ argv: ['a', 1] })).toBe('argv.1: invalid type: integer `1`, expected a string');
    expect(start({ argv: 'sh' })).toBe('argv: invalid type: string "sh", expected a sequence');
    expect(start({ env: { A: 1 } })).toBe('env.A: invalid type: integer `1`, expected a string');
    expect(start({ env: [] })).toBe('env: invalid type: sequence, expected a map');
    expect(start({ tty: 'no' })).toBe('tty: invalid type: string "no", expected a boolean');
    expect(start({ envPolicy: {} })).toBe('envPolicy: missing field `inherit`');
    expect(start({ envPolicy: 5 })).toBe('envPolicy: invalid type: integer `5`, expected struct ExecEnvPolicy');
    expect(start({ envPolicy: { inherit: 5 } })).toBe('envPolicy.inherit: invalid type: integer `5`, expected string or map');
    const request = { method: 'GET', url: 'http://x', requestId: 'r', headers: [{ name: 'a' }] };
    expect(failure(() => decodeParams(HttpRequestParams(), request, 'HttpRequestParams'))).toBe('headers.0: missing field `value`');
  });

  it('passes complete sentences through unchanged', () => {
    expect(start({ envPolicy: { inherit: 'x' } })).toBe('envPolicy.inherit: unknown variant `x`, expected one of `core`, `all`, `none`');
    expect(start({ size: { rows: 0, cols: 1 } })).toBe('size.rows and size.cols must be integers between 1 and 65535');
    expect(failure(() => decodeParams(ProcessResizeParams(), { processId: 'p', rows: 1.5, cols: 2 }, 'ResizeParams'))).toBe(
      'rows and cols must be integers between 1 and 65535',
    );
    expect(failure(() => decodeParams(FsPathParams(), { path: 'relative/x' }, 'FsPathParams'))).toBe(
      'AbsolutePathBuf deserialized without a base path',
    );
  });

  it('does not accept null for pipeStdin (only absence)', () => {
    expect(start({ pipeStdin: null })).toBe('pipeStdin: invalid type: null, expected a boolean');
  });

  it('lets a file URI with a host through as the reference does: −32600', () => {
    expect(failure(() => decodeParams(FsPathParams(), { path: 'file://host/x' }, 'FsPathParams'), ErrorCode.InvalidRequest)).toMatch(
      /^'file:\/\/host\/x' is invalid on '/,
    );
  });

  it('serializes the thrown error as code and message only', () => {
    let thrown: unknown;
    try {
      decodeParams(ProcessReadParams(), {}, 'ReadParams');
    } catch (error) {
      thrown = error;
    }
    expect(JSON.parse(JSON.stringify(thrown))).toEqual({ code: -32602, message: 'missing field `processId`' });
  });

  it('always throws −32602 with a non-empty message for arbitrary JSON that is not valid ReadParams', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (params) => {
        let parsed: unknown;
        try {
          parsed = decodeParams(ProcessReadParams(), params, 'ReadParams');
        } catch (error) {
          expect(error).toBeInstanceOf(ProtocolError);
          expect((error as ProtocolError).code).toBe(-32602);
          expect((error as ProtocolError).message.length).toBeGreaterThan(0);
          return;
        }
        expect(typeof (parsed as { processId: unknown }).processId).toBe('string');
      }),
      { numRuns: 150 },
    );
  });
});
