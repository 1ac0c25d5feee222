import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TerminalQueries } from '../../../../src/server/process/terminal-queries.js';

const bytes = (text: string) => Buffer.from(text, 'latin1');

function filterer(size = { rows: 24, cols: 80 }) {
  const answers: string[] = [];
  const queries = new TerminalQueries(
    (answer) => answers.push(answer.toString('latin1')),
    () => size,
  );
  const run = (...reads: string[]) =>
    reads.map((read) => queries.filter(bytes(read)).toString('latin1')).join('') + queries.flush().toString('latin1');
  return { answers, run };
}

describe('TerminalQueries', () => {
  it('answers cursor position, status and size queries, and takes them out of the output', () => {
    const { answers, run } = filterer({ rows: 30, cols: 100 });
    expect(run('a\x1b[6nb\x1b[5nc\x1b[18td')).toBe('abcd');
    expect(answers).toEqual(['\x1b[1;1R', '\x1b[0n', '\x1b[8;30;100t']);
  });

  it('finds a query split across reads, and gives back a beginning no read completed', () => {
    const { answers, run } = filterer();
    expect(run('X\x1b[', '6nY', 'Z\x1b[1', '8t', 'end\x1b[')).toBe('XYZend\x1b[');
    expect(answers).toEqual(['\x1b[1;1R', '\x1b[8;24;80t']);
  });

  it('leaves every other sequence alone', () => {
    const { answers, run } = filterer();
    const others = '\x1b[c\x1b[>c\x1b]11;?\x07\x1b[?u\x1b[?6n\x1b[0n\x1b[2J\x1b[10;20H\x1b[16t\x1b[6';
    expect(run(others, 'x')).toBe(`${others}x`);
    expect(answers).toEqual([]);
  });

  it('keeps every byte but the queries, however the output is cut into reads', () => {
    const pieces = fc.array(fc.oneof(fc.constantFrom('\x1b[6n', '\x1b[5n', '\x1b[18t', '\x1b', '\x1b[', '\x1b[1', '['), fc.string()));
    fc.assert(
      fc.property(pieces, fc.array(fc.nat()), (parts, cuts) => {
        const text = parts.join('');
        const positions = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
        const reads = [0, ...positions].map((start, i, all) => text.slice(start, all[i + 1] ?? text.length));
        const { answers, run } = filterer();
        const query = new RegExp(`${String.fromCharCode(0x1b)}\\[(6n|5n|18t)`, 'g');
        expect(run(...reads)).toBe(text.replace(query, ''));
        expect(answers).toHaveLength(text.match(query)?.length ?? 0);
      }),
    );
  });
});
