import { StringDecoder } from 'node:string_decoder';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { completePrefixLength } from '../../../src/sessions/utf8.js';

const utf8 = (text: string) => Buffer.from(text, 'utf8');
const cut = (text: string, at: number) => completePrefixLength(utf8(text).subarray(0, at));

/** Strings of 1- to 4-byte characters (well-formed UTF-16, so well-formed UTF-8). */
const texts = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀', '\u0000', '\u07ff', '\u0800', '\uffff', '\u{10000}', '\u{10ffff}') }),
);

describe('completePrefixLength', () => {
  it('keeps an empty buffer and ASCII whole', () => {
    expect(completePrefixLength(Buffer.alloc(0))).toBe(0);
    expect(completePrefixLength(utf8('abc'))).toBe(3);
  });

  it.each([
    ['é', 2],
    ['€', 3],
    ['😀', 4],
  ])('cuts an unfinished %s back to its start, and keeps it whole', (char, size) => {
    expect(utf8(char)).toHaveLength(size);
    for (let n = 1; n < size; n++) expect(cut(`ab${char}`, 2 + n)).toBe(2);
    expect(cut(`ab${char}`, 2 + size)).toBe(2 + size);
    expect(cut(char, size)).toBe(size);
  });

  it('leaves stray continuation bytes alone (nothing to wait for)', () => {
    expect(completePrefixLength(Buffer.from([0x80]))).toBe(1);
    expect(completePrefixLength(Buffer.from([0x61, 0x80, 0x80, 0x80]))).toBe(4);
    expect(completePrefixLength(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80]))).toBe(5);
  });

  it('holds back none of the bytes 0xF8–0xFF, which start no character', () => {
    for (let byte = 0xf8; byte <= 0xff; byte++) expect(completePrefixLength(Buffer.from([0x58, byte]))).toBe(2);
  });

  it('treats a lead byte by the length it announces', () => {
    expect(completePrefixLength(Buffer.from([0x61, 0xc3]))).toBe(1);
    expect(completePrefixLength(Buffer.from([0x61, 0xe2, 0x82]))).toBe(1);
    expect(completePrefixLength(Buffer.from([0x61, 0xf0, 0x9f, 0x98]))).toBe(1);
    expect(completePrefixLength(Buffer.from([0xf0, 0x9f, 0x98, 0x80]))).toBe(4);
    expect(completePrefixLength(Buffer.from([0xe2, 0x82, 0xac, 0x80]))).toBe(4);
  });

  it('never cuts more than 3 bytes and never returns more than the length', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 12 }), (raw) => {
        const bytes = Buffer.from(raw);
        const n = completePrefixLength(bytes);
        expect(n).toBeLessThanOrEqual(bytes.length);
        expect(n).toBeGreaterThanOrEqual(Math.max(0, bytes.length - 3));
      }),
      { numRuns: 250 },
    );
  });

  it('decoding the prefix and then the rest gives the whole text, at any cut', () => {
    fc.assert(
      fc.property(texts, fc.nat(), (text, at) => {
        const bytes = utf8(text);
        const prefix = bytes.subarray(0, at % (bytes.length + 1));
        const n = completePrefixLength(prefix);
        expect(bytes.subarray(0, n).toString('utf8') + bytes.subarray(n).toString('utf8')).toBe(text);
        // Everything the cut left out is an unfinished character: less than one character's bytes.
        expect(prefix.length - n).toBeLessThanOrEqual(3);
        // The kept prefix is itself well-formed: it survives a decode/encode round trip.
        expect(utf8(prefix.subarray(0, n).toString('utf8')).equals(prefix.subarray(0, n))).toBe(true);
      }),
      { numRuns: 250 },
    );
  });

  it('agrees with StringDecoder on how many bytes to hold back', () => {
    fc.assert(
      fc.property(texts, fc.nat(), (text, at) => {
        const bytes = utf8(text);
        const prefix = bytes.subarray(0, at % (bytes.length + 1));
        const decoder = new StringDecoder('utf8');
        const decoded = decoder.write(prefix);
        expect(Buffer.byteLength(decoded)).toBe(completePrefixLength(prefix));
      }),
      { numRuns: 250 },
    );
  });

  it('is the identity on whole texts', () => {
    fc.assert(
      fc.property(texts, (text) => {
        expect(completePrefixLength(utf8(text))).toBe(Buffer.byteLength(text));
      }),
    );
  });
});
