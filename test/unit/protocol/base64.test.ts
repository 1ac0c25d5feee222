import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64, encodeBase64 } from '../../../src/protocol/base64.js';

const STANDARD = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function expectError(text: string): string {
  const result = decodeBase64(text);
  expect(result.ok).toBe(false);
  if (result.ok) throw new Error('unreachable');
  expect(typeof result.error).toBe('string');
  expect(result.error.length).toBeGreaterThan(0);
  return result.error;
}

function expectBytes(text: string): Buffer {
  const result = decodeBase64(text);
  if (!result.ok) throw new Error(`expected ${JSON.stringify(text)} to decode, got ${result.error}`);
  return result.bytes;
}

describe('encodeBase64', () => {
  it('encodes standard padded base64', () => {
    expect(encodeBase64(Buffer.from(''))).toBe('');
    expect(encodeBase64(Buffer.from('A'))).toBe('QQ==');
    expect(encodeBase64(Buffer.from('AB'))).toBe('QUI=');
    expect(encodeBase64(Buffer.from('ABC'))).toBe('QUJD');
    expect(encodeBase64(Uint8Array.from([0xfb, 0xff, 0xbf]))).toBe('+/+/');
  });

  it('encodes only the view, not the whole underlying ArrayBuffer', () => {
    const backing = Buffer.from('xxABCxx');
    expect(encodeBase64(backing.subarray(2, 5))).toBe('QUJD');
    const view = new Uint8Array(backing.buffer, backing.byteOffset + 2, 3);
    expect(encodeBase64(view)).toBe('QUJD');
  });

  it('matches Buffer for random bytes (plain Uint8Array too)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        expect(encodeBase64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
      }),
    );
  });
});

describe('decodeBase64: canonical input', () => {
  it('accepts the empty string and each padding form', () => {
    expect(expectBytes('')).toEqual(Buffer.alloc(0));
    expect(expectBytes('QQ==')).toEqual(Buffer.from('A'));
    expect(expectBytes('QUI=')).toEqual(Buffer.from('AB'));
    expect(expectBytes('QUJD')).toEqual(Buffer.from('ABC'));
    expect(expectBytes('QUJDRA==')).toEqual(Buffer.from('ABCD'));
  });

  it('accepts every symbol of the standard alphabet', () => {
    expect(encodeBase64(expectBytes(STANDARD))).toBe(STANDARD);
  });

  it('round-trips random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const decoded = expectBytes(encodeBase64(bytes));
        expect(decoded.equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('decode then encode is the identity on canonical strings', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        const text = Buffer.from(bytes).toString('base64');
        expect(encodeBase64(expectBytes(text))).toBe(text);
      }),
    );
  });
});

describe('decodeBase64: exact error texts', () => {
  it.each([
    ['A', 'Invalid input length: 1'],
    ['QUJDR', 'Invalid input length: 5'],
    ['AB', 'Invalid padding'],
    ['ABC', 'Invalid padding'],
    ['QUJDRA', 'Invalid padding'],
    ['AB=', 'Invalid symbol 61, offset 2.'],
    ['A===', 'Invalid symbol 61, offset 1.'],
    ['====', 'Invalid symbol 61, offset 0.'],
    ['QQ=A', 'Invalid symbol 61, offset 2.'],
    ['QQ==QQ==', 'Invalid symbol 61, offset 2.'],
    ['QUJDRA=', 'Invalid symbol 61, offset 6.'],
    ['AB==', 'Invalid last symbol 66, offset 1.'],
    ['QR==', 'Invalid last symbol 82, offset 1.'],
    ['QUJ=', 'Invalid last symbol 74, offset 2.'],
    ['QUJDRB==', 'Invalid last symbol 66, offset 5.'],
    ['QQ!=', 'Invalid symbol 33, offset 2.'],
    ['-_-_', 'Invalid symbol 45, offset 0.'],
    ['QQ==\n', 'Invalid symbol 10, offset 4.'],
    [' QQ=', 'Invalid symbol 32, offset 0.'],
    ['Q U=', 'Invalid symbol 32, offset 1.'],
    ['QUJ\u0000', 'Invalid symbol 0, offset 3.'],
    // Non-ASCII: the first UTF-8 byte of the character, at its UTF-8 byte offset.
    ['\u00e9QQ=', 'Invalid symbol 195, offset 0.'],
    ['\u00e9\u00e9Q=', 'Invalid symbol 195, offset 0.'],
  ])('%j -> %s', (text, error) => {
    expect(expectError(text)).toBe(error);
  });

  it('reports byte offsets after earlier non-alphabet characters are accounted for', () => {
    // The first junk character stops the scan, so the offset is that of the first one.
    expect(expectError('QUJD\t===')).toBe('Invalid symbol 9, offset 4.');
  });
});

describe('decodeBase64: rejection properties', () => {
  const canonical = fc.uint8Array({ minLength: 1, maxLength: 60 }).map((b) => Buffer.from(b).toString('base64'));

  it('rejects the URL-safe alphabet wherever - or _ appears', () => {
    fc.assert(
      fc.property(canonical, fc.nat(), fc.constantFrom('-', '_'), (text, at, symbol) => {
        const dataLength = text.replace(/=+$/, '').length;
        const index = at % dataLength;
        const mutated = text.slice(0, index) + symbol + text.slice(index + 1);
        const error = expectError(mutated);
        expect(error).toBe(`Invalid symbol ${symbol.charCodeAt(0)}, offset ${index}.`);
      }),
    );
  });

  it('rejects an ASCII junk character inserted anywhere', () => {
    const junk = fc
      .integer({ min: 0, max: 127 })
      .map((c) => String.fromCharCode(c))
      .filter((c) => !STANDARD.includes(c) && c !== '=');
    fc.assert(
      fc.property(canonical, fc.nat(), junk, (text, at, symbol) => {
        const index = at % (text.length + 1);
        expectError(text.slice(0, index) + symbol + text.slice(index));
      }),
    );
  });

  it('rejects any length that is not a multiple of 4 (missing or extra padding)', () => {
    fc.assert(
      fc.property(canonical, fc.integer({ min: 1, max: 3 }), fc.boolean(), (text, n, strip) => {
        const mutated = strip ? text.slice(0, -n) : text + '='.repeat(n);
        expectError(mutated);
      }),
    );
  });

  it('rejects non-zero bits after the last full byte (non-canonical last symbol)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 40 }).filter((b) => b.length % 3 !== 0),
        fc.integer({ min: 1, max: 15 }),
        (bytes, bits) => {
          const text = Buffer.from(bytes).toString('base64');
          const lastIndex = text.replace(/=+$/, '').length - 1;
          const mask = bytes.length % 3 === 1 ? 0x0f : 0x03;
          if ((bits & mask) === 0) return;
          const value = STANDARD.indexOf(text[lastIndex]!) | (bits & mask);
          const mutated = text.slice(0, lastIndex) + STANDARD[value] + text.slice(lastIndex + 1);
          expect(expectError(mutated)).toBe(`Invalid last symbol ${STANDARD.charCodeAt(value)}, offset ${lastIndex}.`);
        },
      ),
    );
  });

  it('never returns ok for input Buffer would read differently (decoded bytes re-encode to the input)', () => {
    const symbols = fc.constantFrom(...`${STANDARD}=-_ \n!`.split(''));
    fc.assert(
      fc.property(
        fc.array(symbols, { maxLength: 16 }).map((a) => a.join('')),
        (text) => {
          const result = decodeBase64(text);
          if (result.ok) expect(encodeBase64(result.bytes)).toBe(text);
          else expect(result.error.length).toBeGreaterThan(0);
        },
      ),
      { numRuns: 250 },
    );
  });
});

describe('decodeBase64 and non-ASCII text', () => {
  it.each([['QUJ\u0144'], ['QUJ\u012d'], ['\u0141BCD']])('rejects %j (Buffer reads only the low byte of such characters)', (text) => {
    const decoded = decodeBase64(text);
    expect(decoded.ok).toBe(false);
  });
});
