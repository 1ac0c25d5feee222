import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PayloadStash } from '../../../src/protocol/payload-stash.js';
import { Base64Payload } from '../../../src/protocol/base64-payload.js';
import { LARGE_LINE_BYTES, parseLargeAnswer, parseLargeLine } from '../../../src/transport/large-line.js';

const STASH = new PayloadStash();
const parse = (pieces: Buffer[]) => parseLargeLine(pieces, STASH);

/** `line` cut at the given offsets (sorted, duplicates give empty pieces). */
function split(line: Buffer, cuts: number[]): Buffer[] {
  const points = [...cuts.map((c) => c % (line.length + 1))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const point of points) {
    pieces.push(line.subarray(from, point));
    from = point;
  }
  pieces.push(line.subarray(from));
  return pieces;
}

const cutsArb = fc.array(fc.nat(), { maxLength: 12 });

// A value long enough to take this path (at least LARGE_LINE_BYTES / 2 characters).
const BIG_BYTES = Buffer.alloc(Math.ceil((LARGE_LINE_BYTES / 2) * 0.75) + 31);
for (let i = 0; i < BIG_BYTES.length; i++) BIG_BYTES[i] = (i * 31 + (i >> 8)) & 0xff;
const BIG = BIG_BYTES.toString('base64'); // ends in '==' padding
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** BIG with stray bits set in its last symbol (before the `==`). */
const NON_CANONICAL = `${BIG.slice(0, -3) + ALPHABET[ALPHABET.indexOf(BIG.at(-3)!) | 1]!}==`;

const writeFile = (value: string, extra = '') =>
  `{"jsonrpc":"2.0","id":7,"method":"fs/writeFile","params":{"path":"/tmp/x","dataBase64":"${value}"${extra}}}`;

function withoutKey(message: unknown, key: string): unknown {
  const copy = structuredClone(message) as { params: Record<string, unknown> };
  delete copy.params[key];
  return copy;
}

describe('parseLargeLine: ordinary messages go the ordinary way', () => {
  const message = fc.record({
    jsonrpc: fc.constant('2.0'),
    id: fc.oneof(fc.nat(), fc.string()),
    method: fc.constantFrom('process/read', 'process/start', 'initialize', 'fs/readFile', 'process/write', 'fs/writeFile', 'http/request'),
    params: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }),
  });

  it('returns undefined for random messages split into random pieces', () => {
    fc.assert(
      fc.property(message, cutsArb, (value, cuts) => {
        expect(parse(split(Buffer.from(JSON.stringify(value)), cuts))).toBeUndefined();
      }),
      { numRuns: 100 },
    );
  });

  it('returns undefined for small base64 values of the large params', () => {
    expect(parse([Buffer.from(writeFile('QUJD'))])).toBeUndefined();
    expect(parse([Buffer.from('{"id":1,"method":"process/write","params":{"processId":"p","chunk":"aGk="}}')])).toBeUndefined();
    expect(parse([Buffer.from('{"id":1,"method":"http/request","params":{"bodyBase64":""}}')])).toBeUndefined();
  });

  it('returns undefined for an empty line and for empty pieces', () => {
    expect(parse([Buffer.alloc(0)])).toBeUndefined();
    expect(parse([Buffer.alloc(0), Buffer.alloc(0)])).toBeUndefined();
  });

  it('returns undefined for a value one character under the threshold', () => {
    const value = `${'A'.repeat(LARGE_LINE_BYTES / 2 - 4)}AAA=`;
    expect(value.length).toBe(LARGE_LINE_BYTES / 2);
    expect(parse([Buffer.from(writeFile(value.slice(4)))])).toBeUndefined();
  });
});

describe('parseLargeLine: big base64 values', () => {
  it('parses the rest of the line as JSON.parse does, however the line is split', () => {
    const line = Buffer.from(writeFile(BIG, ',"sandbox":null'));
    const expected = withoutKey(JSON.parse(line.toString()), 'dataBase64');
    fc.assert(
      fc.property(cutsArb, (cuts) => {
        const message = parse(split(line, cuts));
        expect(message).toBeDefined();
        expect(withoutKey(message, 'dataBase64')).toEqual(expected);
      }),
      { numRuns: 15 },
    );
  });

  it('handles each large param of its own method, the value first or last', () => {
    const lines = [
      ['chunk', `{"jsonrpc":"2.0","id":"w","method":"process/write","params":{"chunk":"${BIG}","processId":"p","closeStdin":false}}`],
      ['bodyBase64', `{"id":3,"method":"http/request","params":{"method":"POST","url":"http://x","requestId":"r","bodyBase64":"${BIG}"}}`],
      ['dataBase64', `{"method":"fs/writeFile","id":1,"params":{"dataBase64":"${BIG}","path":"/a/ü"}}`],
    ] as const;
    for (const [key, line] of lines) {
      const message = parse(split(Buffer.from(line), [100, 1000, 333_333, 500_000]));
      expect(message).toBeDefined();
      expect(withoutKey(message, key)).toEqual(withoutKey(JSON.parse(line), key));
    }
  });

  it('decodes the exact bytes however the line is split, groups cut between pieces included', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 64 }), fc.array(fc.nat(64), { maxLength: 12 }), (tail, near) => {
        const bytes = Buffer.concat([BIG_BYTES, tail]);
        const line = Buffer.from(writeFile(bytes.toString('base64')));
        const valueStart = line.indexOf('"dataBase64":"') + 14;
        // Cuts within a few bytes of each other put pieces shorter than a base64 group in a row.
        const cuts = near.map((offset, index) => valueStart + index * 3 + offset);
        const stash = new PayloadStash();
        const message = parseLargeLine(split(line, cuts), stash) as { params: { dataBase64: string } };
        const decoded = stash.decodeBase64(message.params.dataBase64);
        expect(decoded.ok && decoded.bytes.equals(bytes)).toBe(true);
      }),
      { numRuns: 40 },
    );
  });

  it('accepts every padding form', () => {
    expect(BIG.endsWith('==')).toBe(true);
    for (const extra of [0, 1, 2]) {
      const value = Buffer.concat([BIG_BYTES, Buffer.alloc(extra, 1)]).toString('base64');
      expect(parse(split(Buffer.from(writeFile(value)), [200_000, 400_001]))).toBeDefined();
    }
  });
});

describe('parseLargeLine: big values it leaves to the ordinary path', () => {
  const at = (text: string, index: number, replacement: string) =>
    text.slice(0, index) + replacement + text.slice(index + replacement.length);

  it.each([
    ['a junk character', at(BIG, 1000, '!')],
    ['a URL-safe character', at(BIG, 1000, '-')],
    ['a space', at(BIG, 5, ' ')],
    ['padding in the middle', at(BIG, 400, '==')],
    ['a length that is not a multiple of 4', BIG.replace(/=+$/, '')],
    ['a non-canonical last symbol', NON_CANONICAL],
    ['a JSON escape', at(BIG, 1000, '\\/')],
    ['a non-ASCII character', at(BIG, 1000, 'é')],
    ['a junk character in the last group', at(BIG, BIG.length - 4, '!')],
    ['a URL-safe underscore', at(BIG, 2000, '_')],
    ['a URL-safe character in the last group', at(BIG, BIG.length - 4, '_')],
    ['padding after padding', `${BIG.slice(0, -4)}A===`],
    ['padding alone in the last group', `${BIG.slice(0, -4)}====`],
  ])('%s in the value', (_name, value) => {
    const line = Buffer.from(writeFile(value));
    const valueStart = line.indexOf('"dataBase64":"') + 14;
    fc.assert(
      fc.property(cutsArb, (cuts) => {
        expect(parse(split(line, cuts))).toBeUndefined();
        // Cut right around the defect too, where a group is carried over between pieces.
        expect(parse(split(line, [valueStart + 999 + ((cuts[0] ?? 0) % 4), line.length - 5 - ((cuts[1] ?? 0) % 3)]))).toBeUndefined();
      }),
      { numRuns: 6 },
    );
  });

  it('the key of another method', () => {
    expect(parse([Buffer.from(`{"id":1,"method":"process/write","params":{"processId":"p","dataBase64":"${BIG}"}}`)])).toBeUndefined();
    expect(parse([Buffer.from(`{"id":1,"method":"fs/readFile","params":{"path":"/x","dataBase64":"${BIG}"}}`)])).toBeUndefined();
  });

  it('a key that is not preceded by { or , (whitespace: not a compact line)', () => {
    expect(parse([Buffer.from(writeFile(BIG).replace('"dataBase64"', ' "dataBase64"'))])).toBeUndefined();
  });

  it('a key beyond the first 1 MiB of the line', () => {
    const line = `{"id":1,"method":"fs/writeFile","params":{"path":"/tmp/${'p'.repeat(1100 * 1024)}","dataBase64":"${BIG}"}}`;
    expect(parse([Buffer.from(line)])).toBeUndefined();
  });

  it('a rest of the line that is not JSON', () => {
    expect(parse([Buffer.from(writeFile(BIG).slice(0, -1))])).toBeUndefined();
    expect(parse([Buffer.from(writeFile(BIG, ',,'))])).toBeUndefined();
  });

  it('a value without its closing quote', () => {
    expect(parse([Buffer.from(`{"id":1,"method":"fs/writeFile","params":{"dataBase64":"${BIG}`)])).toBeUndefined();
  });
});

describe('parseLargeLine: the big value must be the param itself', () => {
  it('hands the decoded bytes to the method through the stash', () => {
    const stash = new PayloadStash();
    const message = parseLargeLine([Buffer.from(writeFile(BIG))], stash) as { params: { dataBase64: string } };
    const decoded = stash.decodeBase64(message.params.dataBase64);
    expect(decoded.ok && decoded.bytes.equals(BIG_BYTES)).toBe(true);
    expect(stash.size).toBe(0);
  });

  it.each([
    ['nested in another member', `{"id":1,"method":"process/write","params":{"meta":{"chunk":"${BIG}"},"processId":"p","chunk":""}}`],
    ['at the top level', `{"chunk":"${BIG}","id":1,"method":"process/write","params":{"processId":"p","chunk":""}}`],
    [
      'under a duplicate key whose last value wins',
      `{"id":1,"method":"process/write","params":{"chunk":"${BIG}","processId":"p","chunk":""}}`,
    ],
  ])('leaves a line to the ordinary path when the big value is %s', (_name, line) => {
    const stash = new PayloadStash();
    expect(parseLargeLine([Buffer.from(line)], stash)).toBeUndefined();
    expect(stash.size).toBe(0);
  });
});

describe('parseLargeAnswer: a client takes large answers decoded', () => {
  const answer = (value: string, extra = '') => `{"id":12,"result":{"chunk":"${value}","eof":false${extra}}}`;

  it('hands the result member over as the decoded bytes, the rest as JSON.parse gives it, however the line is split', () => {
    const line = Buffer.from(answer(BIG, ',"note":"ü"'));
    fc.assert(
      fc.property(cutsArb, (cuts) => {
        const message = parseLargeAnswer(split(line, cuts)) as { id: number; result: Record<string, unknown> };
        expect(message.result.chunk).toBeInstanceOf(Base64Payload);
        expect((message.result.chunk as Base64Payload).bytes.equals(BIG_BYTES)).toBe(true);
        expect({ ...message, result: { ...message.result, chunk: BIG } }).toEqual(JSON.parse(line.toString()));
      }),
      { numRuns: 10 },
    );
    const file = parseLargeAnswer([Buffer.from(`{"jsonrpc":"2.0","id":"r","result":{"dataBase64":"${BIG}"}}`)]) as {
      result: { dataBase64: Base64Payload };
    };
    expect(file.result.dataBase64.bytes.equals(BIG_BYTES)).toBe(true);
  });

  it('decodes a value far longer than its decoding window, arriving as one piece (a WebSocket message)', () => {
    const bytes = Buffer.alloc(9 * 1024 * 1024 + 7);
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = i & 0xff;
    const line = Buffer.from(`{"id":4,"result":{"dataBase64":"${bytes.toString('base64')}"}}`);
    const message = parseLargeAnswer([line]) as { result: { dataBase64: Base64Payload } };
    expect(message.result.dataBase64.bytes.equals(bytes)).toBe(true);
  });

  it('finds the body of an HTTP answer behind thousands of short headers', () => {
    const headers = Array.from({ length: 4000 }, (_, i) => ({ name: `x-${i}`, value: 'v' }));
    const line = Buffer.from(`{"id":3,"result":{"status":200,"headers":${JSON.stringify(headers)},"bodyBase64":"${BIG}"}}`);
    expect(line.indexOf('"bodyBase64"')).toBeGreaterThan(64 * 1024);
    const message = parseLargeAnswer([line]) as { result: { headers: unknown[]; bodyBase64: Base64Payload } };
    expect(message.result.bodyBase64.bytes.equals(BIG_BYTES)).toBe(true);
    expect(message.result.headers).toHaveLength(4000);
  });

  it.each([
    ['a notification', `{"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":"${BIG}"}}`],
    ['a request', `{"id":1,"method":"fs/writeBlock","params":{"handleId":"h","offset":0,"chunk":"${BIG}"}}`],
    ['a member nested deeper', `{"id":1,"result":{"chunks":[{"seq":1,"chunk":"${BIG}"}]}}`],
    ['an error answer', `{"id":1,"error":{"code":1,"message":"x","chunk":"${BIG}"}}`],
    ['a member of another name', `{"id":1,"result":{"other":"${BIG}"}}`],
    ['invalid base64', answer(`${BIG.slice(0, 1000)}!${BIG.slice(1001)}`)],
    ['a duplicate key whose last value wins', `{"id":1,"result":{"chunk":"${BIG}","chunk":""}}`],
  ])('leaves %s to the ordinary path', (_name, line) => {
    expect(parseLargeAnswer([Buffer.from(line)])).toBeUndefined();
  });
});
