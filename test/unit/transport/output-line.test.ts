import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeOutputLine, encodeOutputLine } from '../../../src/transport/output-line.js';

type Stream = 'stdout' | 'stderr' | 'pty';
const STREAMS: Stream[] = ['stdout', 'stderr', 'pty'];

const processIds = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: fc.constantFrom('a', '"', '\\', '\n', '\u0000', 'é', '€', '😀', '\ud800', '\udc00', '/', ' ') }),
  fc.uuid(),
);
const seqs = fc.oneof(fc.nat(), fc.constant(0), fc.nat({ max: Number.MAX_SAFE_INTEGER }));
const chunks = fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b));
const streams = fc.constantFrom(...STREAMS);

const withoutNewline = (line: Buffer) => line.subarray(0, line.length - 1);
const text = (value: unknown) => Buffer.from(JSON.stringify(value));
const message = (processId: string, seq: number, stream: string, chunk: string) => ({
  method: 'process/output',
  params: { processId, seq, stream, chunk },
});

describe('encodeOutputLine', () => {
  it('writes exactly the documented shape, newline included', () => {
    const line = encodeOutputLine('p-1', 7, 'stdout', Buffer.from('hi'));
    expect(line.toString('utf8')).toBe(
      '{"method":"process/output","params":{"processId":"p-1","seq":7,"stream":"stdout","chunk":"aGk="}}\n',
    );
  });

  it('writes an empty chunk as an empty string', () => {
    expect(encodeOutputLine('p', 1, 'pty', Buffer.alloc(0)).toString()).toBe(
      '{"method":"process/output","params":{"processId":"p","seq":1,"stream":"pty","chunk":""}}\n',
    );
  });

  it('is JSON.stringify of the message, for any id, seq, stream and bytes', () => {
    fc.assert(
      fc.property(processIds, seqs, streams, chunks, (processId, seq, stream, bytes) => {
        const line = encodeOutputLine(processId, seq, stream, bytes);
        expect(line[line.length - 1]).toBe(0x0a);
        expect(line.toString('utf8')).toBe(`${JSON.stringify(message(processId, seq, stream, bytes.toString('base64')))}\n`);
        expect(JSON.parse(line.toString('utf8'))).toEqual(message(processId, seq, stream, bytes.toString('base64')));
      }),
      { numRuns: 150 },
    );
  });

  it('asks the allocator for exactly the line length and fills all of it', () => {
    fc.assert(
      fc.property(processIds, seqs, streams, chunks, (processId, seq, stream, bytes) => {
        const sizes: number[] = [];
        let given: Buffer | undefined;
        const line = encodeOutputLine(processId, seq, stream, bytes, (size) => {
          sizes.push(size);
          given = Buffer.alloc(size, 0xff); // 0xff never appears in valid UTF-8: any unwritten byte shows
          return given;
        });
        expect(sizes).toHaveLength(1);
        expect(line).toBe(given);
        expect(line.includes(0xff)).toBe(false);
        expect(line.length).toBe(Buffer.byteLength(JSON.stringify(message(processId, seq, stream, bytes.toString('base64')))) + 1);
      }),
    );
  });
});

describe('decodeOutputLine', () => {
  it('reads back what encodeOutputLine wrote (ids without JSON escapes)', () => {
    fc.assert(
      fc.property(processIds, seqs, streams, chunks, (processId, seq, stream, bytes) => {
        const decoded = decodeOutputLine(withoutNewline(encodeOutputLine(processId, seq, stream, bytes)));
        if (JSON.stringify(processId).includes('\\') || seq === 0) {
          // Escapes in the id, or a seq no server sends (they count from 1): left to the ordinary, checking JSON path.
          expect(decoded).toBeUndefined();
        } else {
          expect(decoded).toBeDefined();
          expect(decoded!.processId).toBe(processId);
          expect(decoded!.seq).toBe(seq);
          expect(decoded!.stream).toBe(stream);
          expect(decoded!.chunk.equals(bytes)).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('reads unicode ids and every stream', () => {
    for (const stream of STREAMS) {
      const decoded = decodeOutputLine(withoutNewline(encodeOutputLine('процесс-😀-€', 42, stream, Buffer.from([0, 255, 10]))));
      expect(decoded).toEqual({ processId: 'процесс-😀-€', seq: 42, stream, chunk: Buffer.from([0, 255, 10]) });
    }
  });

  it('reads the same shape written by JSON.stringify', () => {
    expect(decodeOutputLine(text(message('id', 3, 'stderr', 'AAEC')))).toEqual({
      processId: 'id',
      seq: 3,
      stream: 'stderr',
      chunk: Buffer.from([0, 1, 2]),
    });
    expect(decodeOutputLine(text(message('', 1, 'stdout', '')))).toEqual({
      processId: '',
      seq: 1,
      stream: 'stdout',
      chunk: Buffer.alloc(0),
    });
  });

  it('leaves a seq of 0, one with a leading zero (not JSON), or one too long to be exact to the checking JSON path', () => {
    expect(decodeOutputLine(text(message('p', 0, 'stdout', '')))).toBeUndefined();
    expect(
      decodeOutputLine(
        Buffer.from('{"method":"process/output","params":{"processId":"p","seq":99999999999999999999,"stream":"stdout","chunk":""}}'),
      ),
    ).toBeUndefined();
    expect(
      decodeOutputLine(Buffer.from('{"method":"process/output","params":{"processId":"p","seq":07,"stream":"stdout","chunk":""}}')),
    ).toBeUndefined();
  });

  it('wants the line without its newline', () => {
    expect(decodeOutputLine(encodeOutputLine('p', 1, 'stdout', Buffer.from('x')))).toBeUndefined();
  });

  it.each([
    ['an empty line', ''],
    ['another method', '{"method":"process/exited","params":{"processId":"p","seq":1,"exitCode":0}}'],
    ['a request', '{"jsonrpc":"2.0","id":1,"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":""}}'],
    ['another key order', '{"method":"process/output","params":{"seq":1,"processId":"p","stream":"stdout","chunk":""}}'],
    ['whitespace', '{"method": "process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":""}}'],
    ['an escaped quote in the id', '{"method":"process/output","params":{"processId":"a\\"b","seq":1,"stream":"stdout","chunk":""}}'],
    ['a unicode escape in the id', '{"method":"process/output","params":{"processId":"\\u0041","seq":1,"stream":"stdout","chunk":""}}'],
    ['a numeric id', '{"method":"process/output","params":{"processId":5,"seq":1,"stream":"stdout","chunk":""}}'],
    ['a string seq', '{"method":"process/output","params":{"processId":"p","seq":"1","stream":"stdout","chunk":""}}'],
    ['a negative seq', '{"method":"process/output","params":{"processId":"p","seq":-1,"stream":"stdout","chunk":""}}'],
    ['a fractional seq', '{"method":"process/output","params":{"processId":"p","seq":1.5,"stream":"stdout","chunk":""}}'],
    ['an empty seq', '{"method":"process/output","params":{"processId":"p","seq":,"stream":"stdout","chunk":""}}'],
    ['an unknown stream', '{"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdin","chunk":""}}'],
    ['a stream prefix', '{"method":"process/output","params":{"processId":"p","seq":1,"stream":"std","chunk":""}}'],
    ['a member after the chunk', '{"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":"","x":"y"}}'],
    ['a member after params', '{"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":""},"x":1}'],
    ['a truncated line', '{"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":"QQ'],
    ['a truncated id', '{"method":"process/output","params":{"processId":"p'],
    ['only the prefix', '{"method":"process/output","params":{"processId":'],
    ['trailing junk', '{"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":""}} '],
  ])('returns undefined for %s', (_name, line) => {
    expect(decodeOutputLine(Buffer.from(line))).toBeUndefined();
  });

  it('returns undefined for every strict prefix of a valid line', () => {
    const line = withoutNewline(encodeOutputLine('p', 12, 'stderr', Buffer.from('hello')));
    for (let end = 0; end < line.length; end++) expect(decodeOutputLine(line.subarray(0, end))).toBeUndefined();
  });

  it('never throws on random bytes after the prefix', () => {
    const prefix = Buffer.from('{"method":"process/output","params":{"processId":');
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (tail) => {
        const decoded = decodeOutputLine(Buffer.concat([prefix, tail]));
        if (decoded) expect(STREAMS).toContain(decoded.stream);
      }),
      { numRuns: 150 },
    );
  });

  it('leaves a chunk that is not canonical base64 to the checking path, which refuses it', () => {
    const shaped = (chunk: string) =>
      Buffer.from(`{"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":"${chunk}"}}`);
    expect(decodeOutputLine(shaped('YWJj'))?.chunk).toEqual(Buffer.from('abc'));
    for (const bad of ['YWJ', 'YW*j', 'YW-j', 'YW_j', 'YR==', 'YQ==YQ==', 'YW\\u0041j', 'YWJjé==='])
      expect(decodeOutputLine(shaped(bad)), bad).toBeUndefined();
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 60 }), fc.nat(), fc.integer({ min: 0, max: 255 }), (bytes, at, junk) => {
        const base64 = Buffer.from(bytes).toString('base64');
        const index = at % base64.length;
        const mutated = `${base64.slice(0, index)}${String.fromCharCode(junk)}${base64.slice(index + 1)}`;
        const decoded = decodeOutputLine(shaped(mutated));
        // Either refused, or the mutation was itself canonical base64 of other bytes.
        if (decoded) expect(decoded.chunk.toString('base64')).toBe(mutated);
      }),
      { numRuns: 300 },
    );
  });
});
