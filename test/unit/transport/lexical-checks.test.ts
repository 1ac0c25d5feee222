import { describe, expect, it } from 'vitest';
import { isLexicallyPlain, lexicalFault } from '../../../src/transport/lexical-checks.js';
import { WireIds } from '../../../src/transport/wire-ids.js';

const parsed = (text: string) => ({ text, value: JSON.parse(text) as Record<string, unknown> });

describe('lexicalFault', () => {
  it('aliases an id beyond 2^53 only on a request, the one kind of message whose answer releases it', () => {
    const ids = new WireIds();
    const request = parsed('{"id":9007199254740993,"method":"fs/getMetadata","params":{}}');
    expect(lexicalFault(request.value, request.text, ids)).toBeUndefined();
    expect(ids.textOf(request.value.id)).toBe('9007199254740993');
    ids.release(request.value.id);
    expect(ids.textOf(request.value.id)).toBeUndefined();
    for (const text of ['{"id":9007199254740993,"result":{}}', '{"id":9007199254740993,"method":5}', '{"id":9007199254740993}']) {
      const other = parsed(text);
      expect(lexicalFault(other.value, other.text, ids)).toBeUndefined();
      expect(typeof other.value.id).toBe('number');
    }
  });

  it.each([
    ['"\\ud800"', true],
    ['"\\udc00"', true],
    ['"\\ud800\\ud800"', true],
    ['"\\ud800x\\udc00"', true],
    ['"\\ud800\\\\udc00"', true],
    ['"\\ud83d\\ude00"', false],
    ['"\\\\ud800"', false],
    ['"\\\\\\ud800"', true],
    ['"\\u0041\\u00e9"', false],
  ])('finds a lone surrogate escape in %s: %s', (json, lone) => {
    const text = `{"id":1,"method":"m","params":{"a":${json}}}`;
    expect(lexicalFault(JSON.parse(text), text, undefined)?.message).toBe(lone ? 'Parse error: lone surrogate in a \\u escape' : undefined);
    expect(isLexicallyPlain(JSON.parse(text), text)).toBe(!lone);
  });

  it('needs no stack in proportion to the nesting', () => {
    const text = `{"id":1,"method":"m","params":${'['.repeat(100_000)}"\\u0041"${']'.repeat(100_000)}}`;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = {}; // V8's own parser may refuse the depth: the check must not care
    }
    expect(lexicalFault(value, text, new WireIds())).toBeUndefined();
  });
});
