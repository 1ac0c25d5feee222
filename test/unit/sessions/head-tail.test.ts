import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HeadTail, MIN_HEAD_TAIL_BYTES } from '../../../src/sessions/head-tail.js';
import { completePrefixLength } from '../../../src/sessions/utf8.js';

/** What the constructor sets aside for the marker. */
const RESERVE = 64;
const halfOf = (maxBytes: number) => Math.floor((maxBytes - RESERVE) / 2);
const marker = (removed: number) => `\n…${removed} bytes truncated…\n`;

/** `bytes` cut into pieces at the given offsets. */
function pieces(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const point of [...points, bytes.length]) {
    out.push(bytes.subarray(from, point));
    from = point;
  }
  return out;
}

function collect(maxBytes: number, chunks: Buffer[]): HeadTail {
  const collected = new HeadTail(maxBytes);
  for (const chunk of chunks) collected.push(chunk);
  return collected;
}

// The sizes the constructor handles (see the report: smaller ones leave no room for the head and tail).
const maxBytesArb = fc.integer({ min: MIN_HEAD_TAIL_BYTES, max: 200 });
const asciiArb = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'x', '0', '\n'), maxLength: 600 });
const unicodeArb = fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀', '\u0800', '\u{10ffff}'), maxLength: 300 });
const cutsArb = fc.array(fc.nat(), { maxLength: 15 });

describe('HeadTail: small outputs', () => {
  it('is empty at first', () => {
    const collected = new HeadTail(1000);
    expect(collected.length).toBe(0);
    expect(collected.text()).toBe('');
  });

  it('keeps everything that fits', () => {
    const collected = collect(1000, [Buffer.from('hello '), Buffer.alloc(0), Buffer.from('wörld')]);
    expect(collected.length).toBe(12);
    expect(collected.text()).toBe('hello wörld');
  });

  it('keeps a small piece between two that fill the halves, when all of it fits', () => {
    const half = halfOf(131_072);
    const [head, middle, tail] = [Buffer.alloc(half, 'h'), Buffer.alloc(50, 'm'), Buffer.alloc(half, 't')];
    expect(collect(131_072, [head, middle, tail]).text()).toBe(`${head}${middle}${tail}`);
  });

  it('keeps a character split across pushes', () => {
    const euro = Buffer.from('€');
    expect(collect(1000, [euro.subarray(0, 1), euro.subarray(1, 2), euro.subarray(2)]).text()).toBe('€');
  });

  it('keeps everything up to maxBytes, however it arrives', () => {
    fc.assert(
      fc.property(maxBytesArb, asciiArb, cutsArb, (maxBytes, text, cuts) => {
        const bytes = Buffer.from(text.slice(0, maxBytes));
        expect(collect(maxBytes, pieces(bytes, cuts)).text()).toBe(bytes.toString());
      }),
      { numRuns: 150 },
    );
  });
});

describe('HeadTail: truncation', () => {
  it('keeps the head and the tail and says how much it dropped', () => {
    const maxBytes = RESERVE + 8; // half = 4
    const collected = collect(maxBytes, [Buffer.from('0123456789'), Buffer.from('abcdefghij'.repeat(10))]);
    expect(collected.length).toBe(110);
    expect(collected.text()).toBe(`0123${marker(102)}ghij`);
  });

  it('is head, marker and tail for any ASCII input over the limit, however it arrives', () => {
    fc.assert(
      fc.property(maxBytesArb, asciiArb, cutsArb, (maxBytes, text, cuts) => {
        const bytes = Buffer.from(text);
        const half = halfOf(maxBytes);
        const collected = collect(maxBytes, pieces(bytes, cuts));
        expect(collected.length).toBe(bytes.length);
        const whole = text;
        const cutText = text.slice(0, half) + marker(bytes.length - 2 * half) + text.slice(bytes.length - half);
        const out = collected.text();
        if (bytes.length <= 2 * half) expect(out).toBe(whole);
        else if (bytes.length > maxBytes) expect(out).toBe(cutText);
        else expect([whole, cutText]).toContain(out);
        expect(Buffer.byteLength(out)).toBeLessThanOrEqual(maxBytes);
      }),
      { numRuns: 200 },
    );
  });

  it('never splits a character and stays within maxBytes, for multi-byte text', () => {
    fc.assert(
      fc.property(maxBytesArb, unicodeArb, cutsArb, (maxBytes, text, cuts) => {
        const bytes = Buffer.from(text);
        const out = collect(maxBytes, pieces(bytes, cuts)).text();
        expect(out).not.toContain('\ufffd');
        expect(Buffer.byteLength(out)).toBeLessThanOrEqual(maxBytes);
        const at = out.indexOf('\n…');
        if (at < 0) {
          expect(out).toBe(text);
          return;
        }
        const match = /^\n…(\d+) bytes truncated…\n/.exec(out.slice(at))!;
        const head = out.slice(0, at);
        const tail = out.slice(at + match[0].length);
        expect(text.startsWith(head)).toBe(true);
        expect(text.endsWith(tail)).toBe(true);
        expect(Number(match[1])).toBe(bytes.length - Buffer.byteLength(head) - Buffer.byteLength(tail));
        // Only a character's worth is lost at each cut.
        expect(Buffer.byteLength(head)).toBeGreaterThan(halfOf(maxBytes) - 4);
        expect(Buffer.byteLength(tail)).toBeGreaterThan(halfOf(maxBytes) - 4);
      }),
      { numRuns: 200 },
    );
  });

  it('counts beyond what it keeps, for a long stream of pushes', () => {
    const collected = new HeadTail(RESERVE + 20);
    for (let i = 0; i < 10_000; i++) collected.push(Buffer.from('0123456789'));
    expect(collected.length).toBe(100_000);
    expect(collected.text()).toBe(`0123456789${marker(100_000 - 20)}0123456789`);
  });
});

describe('HeadTail: takeIncompleteEnd', () => {
  const euro = Buffer.from('€');

  it('returns nothing when the end is a whole character', () => {
    const collected = collect(1000, [Buffer.from('a€')]);
    expect(collected.takeIncompleteEnd()).toEqual(Buffer.alloc(0));
    expect(collected.length).toBe(4);
    expect(collected.text()).toBe('a€');
  });

  it('returns nothing when empty', () => {
    expect(new HeadTail(1000).takeIncompleteEnd()).toEqual(Buffer.alloc(0));
  });

  it('takes an unfinished character off the head', () => {
    const collected = collect(1000, [Buffer.from('ab'), euro.subarray(0, 2)]);
    expect(collected.takeIncompleteEnd()).toEqual(euro.subarray(0, 2));
    expect(collected.length).toBe(2);
    expect(collected.text()).toBe('ab');
    collected.push(Buffer.from('c'));
    expect(collected.text()).toBe('abc');
  });

  it('takes an unfinished character off the tail', () => {
    const collected = collect(RESERVE + 8, [Buffer.from('abcd'), Buffer.from('ef'), euro.subarray(0, 1)]);
    expect(collected.takeIncompleteEnd()).toEqual(euro.subarray(0, 1));
    expect(collected.length).toBe(6);
    expect(collected.text()).toBe('abcdef');
  });

  it('takes it off a truncated tail, and the marker counts only what was kept back', () => {
    const collected = collect(RESERVE + 8, [Buffer.from(`0123${'a'.repeat(70)}56789`), Buffer.from('wxyz'), euro.subarray(0, 2)]);
    expect(collected.takeIncompleteEnd()).toEqual(euro.subarray(0, 2));
    expect(collected.length).toBe(83);
    expect(collected.text()).toBe(`0123${marker(75)}wxyz`);
  });

  it('leaves whole characters and hands back the rest, wherever the unfinished character starts', () => {
    fc.assert(
      fc.property(fc.integer({ min: MIN_HEAD_TAIL_BYTES, max: 200 }), unicodeArb, fc.nat(), cutsArb, (maxBytes, text, at, cuts) => {
        const bytes = Buffer.from(text).subarray(0, at % (Buffer.byteLength(text) + 1));
        const complete = completePrefixLength(bytes);
        const half = halfOf(maxBytes);
        const collected = collect(maxBytes, pieces(bytes, cuts));
        const taken = collected.takeIncompleteEnd();
        expect(taken.equals(bytes.subarray(complete))).toBe(true);
        expect(collected.length).toBe(complete);
        expect(collected.text()).not.toContain('\ufffd');
        // Nothing was dropped while everything fit in head and tail (the take comes after any drop).
        if (bytes.length <= 2 * half) expect(collected.text()).toBe(bytes.subarray(0, complete).toString());
      }),
      { numRuns: 200 },
    );
  });
});

describe('HeadTail edge cases found by review', () => {
  it('takes back a character whose lead byte ends the head and whose rest starts the tail', () => {
    const collected = new HeadTail(72); // half = 4
    collected.push(Buffer.from([0x61, 0x62, 0x63, 0xe2, 0x82]));
    expect([...collected.takeIncompleteEnd()]).toEqual([0xe2, 0x82]);
    expect(collected.text()).toBe('abc');
    expect(collected.length).toBe(3);
  });

  it('refuses a size too small to hold a character in each half', () => {
    expect(() => new HeadTail(65)).toThrow(RangeError);
    expect(() => new HeadTail(MIN_HEAD_TAIL_BYTES)).not.toThrow();
  });
});
