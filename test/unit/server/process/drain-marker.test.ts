import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MarkerSearch, newDrainMarker } from '../../../../src/server/process/drain-marker.js';

describe('MarkerSearch', () => {
  it('passes output through and stops at the marker, however the reads split it', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.array(fc.nat(400), { maxLength: 8 }), (before, cuts) => {
        const marker = newDrainMarker();
        const stream = Buffer.concat([before, marker, Buffer.from('after')]);
        const points = [...new Set(cuts.map((cut) => cut % (stream.length + 1)))].sort((a, b) => a - b);
        const search = new MarkerSearch(marker);
        const output: Buffer[] = [];
        let found = false;
        let from = 0;
        for (const point of [...points, stream.length]) {
          if (found) break;
          const result = search.push(stream.subarray(from, point));
          output.push(Buffer.from(result.output));
          found = result.found;
          from = point;
        }
        expect(found).toBe(true);
        expect(Buffer.concat(output).equals(Buffer.from(before))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('holds back the last marker-length-minus-one bytes, which could begin a split marker', () => {
    const marker = Buffer.from('\u0007END\u0007');
    const search = new MarkerSearch(marker);
    expect(search.push(Buffer.from('hello\u0007EN'))).toEqual({ output: Buffer.from('hell'), found: false });
    expect(search.push(Buffer.from('X more'))).toEqual({ output: Buffer.from('o\u0007ENX '), found: false });
    expect(search.push(Buffer.from('\u0007END\u0007tail'))).toEqual({ output: Buffer.from('more'), found: true });
  });

  it('is made of what no terminal output flag changes (olcuc upper-cases letters)', () => {
    const marker = newDrainMarker().toString('latin1');
    const BEL = '\u0007';
    expect([marker.at(0), marker.at(-1)]).toEqual([BEL, BEL]);
    expect(marker.slice(1, -1)).toMatch(/^[A-Z0-9-]+$/);
  });

  it('makes a fresh marker each time', () => {
    expect(newDrainMarker().equals(newDrainMarker())).toBe(false);
  });
});
