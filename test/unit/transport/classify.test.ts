import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { classify } from '../../../src/transport/classify.js';

function accepted(value: unknown): void {
  const result = classify(value);
  expect(result.ok).toBe(true);
  if (result.ok) expect(result.message).toBe(value); // the same object, untouched
}

function rejected(value: unknown): string {
  const result = classify(value);
  if (result.ok) throw new Error(`expected ${JSON.stringify(value)} to be rejected`);
  expect(result.error.code).toBe(ErrorCode.InvalidRequest);
  return result.error.message;
}

describe('classify: messages it accepts', () => {
  it.each([
    ['a request with a numeric id', { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }],
    ['a request with a string id', { jsonrpc: '2.0', id: 'abc', method: 'x' }],
    ['a request with an empty string id', { id: '', method: 'x' }],
    ['a request with id 0 and a negative id', { id: -7, method: 'x' }],
    ['a notification (no id)', { jsonrpc: '2.0', method: 'initialized' }],
    ['a method that is an empty string', { method: '' }],
    ['a null trace', { method: 'x', trace: null }],
    ['an object trace', { method: 'x', trace: { traceparent: 't' } }],
    ['a success response', { jsonrpc: '2.0', id: 1, result: null }],
    ['an error response', { jsonrpc: '2.0', id: 2, error: { code: -1, message: 'm' } }],
    ['a response with a null id', { id: null, error: { code: -32700, message: 'Parse error' } }],
    ['a response with both result and error', { id: 1, result: 1, error: {} }],
    ['a request without jsonrpc', { id: 1, method: 'x' }],
    ['params of any shape', { method: 'x', params: [1, 2] }],
  ])('%s', (_name, value) => {
    accepted(value);
  });

  it('accepts the 64-bit integer bounds that a double can hold', () => {
    accepted({ id: -(2 ** 63), method: 'x' });
    accepted({ id: Number.MAX_SAFE_INTEGER, method: 'x' });
    accepted({ id: 2 ** 62, method: 'x' });
  });

  it('accepts any request with a safe integer or string id', () => {
    fc.assert(
      fc.property(fc.oneof(fc.maxSafeInteger(), fc.string()), fc.string(), (id, method) => {
        accepted({ jsonrpc: '2.0', id, method });
      }),
    );
  });

  it('accepts objects without a prototype', () => {
    const value = Object.assign(Object.create(null) as Record<string, unknown>, { method: 'x', id: 1 });
    accepted(value);
  });
});

describe('classify: what it rejects, and why', () => {
  it('refuses batches, empty or not', () => {
    expect(rejected([])).toBe('Invalid Request: batch requests are not supported');
    expect(rejected([{ id: 1, method: 'x' }])).toBe('Invalid Request: batch requests are not supported');
  });

  it.each([null, undefined, 0, 1.5, 'x', '', true, false])('refuses the non-object %j', (value) => {
    expect(rejected(value)).toBe('Invalid Request: expected a JSON object');
  });

  it.each([5, null, true, {}, [], ['x']])('refuses a method of %j', (method) => {
    expect(rejected({ id: 1, method })).toBe('Invalid Request: "method" must be a string');
  });

  it.each([
    ['a non-integer', 1.5],
    ['null', null],
    ['a boolean', true],
    ['an object', {}],
    ['an array', [1]],
    ['2^63 (just over i64)', 2 ** 63],
    ['-2^64', -(2 ** 64)],
    ['a huge number', 1e300],
  ])('refuses a request id that is %s', (_name, id) => {
    expect(rejected({ id, method: 'x' })).toBe('Invalid Request: "id" must be a string or a 64-bit integer');
  });

  it.each([5, 'x', true, [], [{}]])('refuses a trace of %j', (trace) => {
    expect(rejected({ method: 'x', trace })).toBe('Invalid Request: "trace" must be null or an object');
  });

  it('checks trace before id', () => {
    expect(rejected({ id: 1.5, method: 'x', trace: 1 })).toBe('Invalid Request: "trace" must be null or an object');
  });

  it.each([
    ['an empty object', {}],
    ['an id alone', { id: 1 }],
    ['a result without an id', { result: 1 }],
    ['an error without an id', { error: { code: 1, message: 'm' } }],
    ['params alone', { jsonrpc: '2.0', params: {} }],
  ])('refuses %s: missing method', (_name, value) => {
    expect(rejected(value)).toBe('Invalid Request: missing "method"');
  });

  it('never throws, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const result = classify(value);
        if (result.ok) {
          expect(typeof value === 'object' && value !== null && !Array.isArray(value)).toBe(true);
        } else {
          expect(result.error.code).toBe(-32600);
          expect(result.error.message.startsWith('Invalid Request: ')).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });
});
