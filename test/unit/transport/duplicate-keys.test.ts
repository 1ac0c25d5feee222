import { describe, expect, it } from 'vitest';
import { duplicateKey, mayCarrySandbox } from '../../../src/transport/duplicate-keys.js';

describe('duplicateKey', () => {
  it('finds a key that comes twice in one object, at any depth, however it is spelled', () => {
    expect(duplicateKey('{"a":1,"a":2}')).toBe('a');
    expect(duplicateKey('{"p":{"s":{"t":"m","t":"d"}}}')).toBe('t');
    expect(duplicateKey('{"p":[{"k":1},{"k":2,"k":3}]}')).toBe('k');
    expect(duplicateKey('{"sandbox":1,"sandb\\u006fx":2}')).toBe('sandbox');
  });

  it('takes equal keys in different objects, and keys written inside strings, as no duplicate', () => {
    expect(duplicateKey('{"a":{"k":1},"b":{"k":1}}')).toBeUndefined();
    expect(duplicateKey('{"a":"\\"a\\":1","b":["a","a"]}')).toBeUndefined();
    expect(duplicateKey('{"a\\\\":1,"a":2}')).toBeUndefined();
    expect(duplicateKey('[1,{"x":1},{"x":1}]')).toBeUndefined();
  });
});

describe('mayCarrySandbox', () => {
  it('looks at lines naming sandbox, or with an escape that may spell it', () => {
    expect(mayCarrySandbox('{"sandbox":null}')).toBe(true);
    expect(mayCarrySandbox('{"sandb\\u006fx":null}')).toBe(true);
    expect(mayCarrySandbox('{"id":1,"method":"process/read"}')).toBe(false);
  });
});
