import { describe, expect, it } from 'vitest';
import { answerIdOf } from '../../../src/transport/answer-id.js';

const pieces = (text: string, size: number) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => Buffer.from(text.slice(i * size, (i + 1) * size)));

describe('answerIdOf', () => {
  it('reads a number or string id at the head of a line, across pieces', () => {
    expect(answerIdOf(pieces('{"id":42,"result":{"x":1}}', 3))).toBe(42);
    expect(answerIdOf(pieces('{"id":"abc","error":{}}', 1))).toBe('abc');
    expect(answerIdOf(pieces('{"id":7}', 100))).toBe(7);
  });

  it('gives nothing for an id it cannot read safely: elsewhere, escaped, too long, or not an id', () => {
    expect(answerIdOf(pieces('{"result":1,"id":4}', 5))).toBeUndefined();
    expect(answerIdOf(pieces('{"id":"a\\"b","result":1}', 5))).toBeUndefined();
    expect(answerIdOf(pieces(`{"id":${'9'.repeat(16)},"result":1}`, 5))).toBeUndefined();
    expect(answerIdOf(pieces(`{"id":"${'x'.repeat(300)}","result":1}`, 64))).toBeUndefined();
    expect(answerIdOf(pieces('{"id":null,"error":{}}', 5))).toBeUndefined();
  });
});
