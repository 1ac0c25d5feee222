/** blockReader / blockWriter against an in-memory file whose answers arrive late and out of order. */
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { blockReader, blockWriter } from '../../../src/client/file-streams.js';
import { Base64Payload, bytesOf } from '../../../src/protocol/base64-payload.js';

/** A fake `call` over one in-memory file; each answer is delayed by a random number of ticks. */
function fakeServer(initial: Buffer, delays: number[] = []) {
  let file = Buffer.from(initial);
  let inFlight = 0;
  let maxInFlight = 0;
  let n = 0;
  const calls: string[] = [];
  const call = async (method: string, params: any): Promise<any> => {
    calls.push(method);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const ticks = delays[n++ % Math.max(delays.length, 1)] ?? 0;
    for (let i = 0; i < ticks; i++) await new Promise((resolve) => setImmediate(resolve));
    inFlight--;
    switch (method) {
      case 'fs/open':
        if (params.mode === 'replace') file = Buffer.alloc(0);
        return { handleId: params.handleId };
      case 'fs/readBlock': {
        const bytes = file.subarray(params.offset, params.offset + params.len);
        // Answers come in both forms a chunk takes: base64 text, or decoded bytes (a large answer, see large-line.ts).
        const chunk = n % 2 === 0 ? bytes.toString('base64') : new Base64Payload(Buffer.from(bytes));
        return { chunk, eof: bytes.length < params.len };
      }
      case 'fs/writeBlock': {
        const bytes = bytesOf(params.chunk);
        const end = params.offset + bytes.length;
        if (end > file.length) file = Buffer.concat([file, Buffer.alloc(end - file.length)]);
        bytes.copy(file, params.offset);
        return {};
      }
      case 'fs/close':
        return {};
      default:
        throw new Error(`unexpected ${method}`);
    }
  };
  return { call: call as never, calls, file: () => file, maxInFlight: () => maxInFlight };
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

describe('blockReader', () => {
  it('delivers the file in order whatever order the answers come in, with a bounded number in flight', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 5000 }),
        fc.integer({ min: 1, max: 700 }),
        fc.array(fc.nat(5), { minLength: 1, maxLength: 8 }),
        async (bytes, blockSize, delays) => {
          const server = fakeServer(Buffer.from(bytes), delays);
          const read = await readAll(blockReader(server.call, '/f', { blockSize }));
          expect(read.equals(Buffer.from(bytes))).toBe(true);
          expect(server.maxInFlight()).toBeLessThanOrEqual(4);
          expect(server.calls.at(-1)).toBe('fs/close');
        },
      ),
      { numRuns: 60 },
    );
  });

  it('stops asking while the consumer is not reading', async () => {
    const server = fakeServer(Buffer.alloc(1024 * 1024, 1));
    const stream = blockReader(server.call, '/f', { blockSize: 1024 });
    stream.pause();
    stream.on('data', () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The highWaterMark is 4 blocks; a few more may be on their way, never the whole file.
    expect(server.calls.filter((method) => method === 'fs/readBlock').length).toBeLessThanOrEqual(16);
    stream.destroy();
  });

  it('refuses a block size the protocol does not allow', () => {
    const server = fakeServer(Buffer.alloc(0));
    expect(() => blockReader(server.call, '/f', { blockSize: 1024 * 1024 + 1 })).toThrow(RangeError);
  });
});

describe('blockWriter', () => {
  it('writes every byte at its offset, however the writes are cut', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ maxLength: 900 }), { maxLength: 12 }),
        fc.integer({ min: 1, max: 500 }),
        fc.array(fc.nat(4), { minLength: 1, maxLength: 6 }),
        async (pieces, blockSize, delays) => {
          const server = fakeServer(Buffer.from('old contents'), delays);
          const writer = blockWriter(server.call, '/f', { blockSize });
          await pipeline(
            (async function* () {
              for (const piece of pieces) yield Buffer.from(piece);
            })(),
            writer,
          );
          expect(server.file().equals(Buffer.concat(pieces.map((piece) => Buffer.from(piece))))).toBe(true);
          expect(server.maxInFlight()).toBeLessThanOrEqual(4);
          expect(server.calls.at(-1)).toBe('fs/close');
        },
      ),
      { numRuns: 60 },
    );
  });

  it('sends small writes that piled up while blocks were on their way together, in full blocks', async () => {
    const server = fakeServer(Buffer.alloc(0), [2, 1, 3]);
    const writer = blockWriter(server.call, '/f', { blockSize: 4096 });
    const pieces = Array.from({ length: 256 }, (_, index) => Buffer.alloc(256, index));
    await pipeline(
      (async function* () {
        yield* pieces;
      })(),
      writer,
    );
    expect(server.file().equals(Buffer.concat(pieces))).toBe(true);
    // 64 KiB in 4 KiB blocks is 16; one request per write would be 256.
    expect(server.calls.filter((method) => method === 'fs/writeBlock').length).toBeLessThan(64);
  });

  it('lets the caller reuse its buffer once a write is called back, while blocks are still in flight', async () => {
    const server = fakeServer(Buffer.alloc(0), [3, 1, 4, 1, 5]);
    const writer = blockWriter(server.call, '/f', { blockSize: 4 });
    const buffer = Buffer.alloc(6);
    const expected: Buffer[] = [];
    for (let round = 0; round < 5; round++) {
      buffer.fill(0x61 + round);
      expected.push(Buffer.from(buffer));
      await new Promise((resolve, reject) => writer.write(buffer, (error) => (error ? reject(error) : resolve(undefined))));
    }
    await new Promise((resolve) => writer.end(resolve));
    expect(server.file().toString()).toBe(Buffer.concat(expected).toString());
  });

  it('fails the stream when a block is refused, and still closes the handle', async () => {
    const server = fakeServer(Buffer.alloc(0));
    const failing = (async (method: string, params: unknown) => {
      if (method === 'fs/writeBlock') throw Object.assign(new Error('No space left on device (os error 28)'), { code: -32603 });
      return (server.call as (m: string, p: unknown) => Promise<unknown>)(method, params);
    }) as never;
    const writer: Writable = blockWriter(failing, '/f');
    await expect(pipeline([Buffer.from('x')], writer)).rejects.toThrow('No space left on device');
    expect(server.calls.at(-1)).toBe('fs/close');
  });

  it('sends no block after destroy(): only those already on their way land, then the handle is closed', async () => {
    const server = fakeServer(Buffer.alloc(0), [3]);
    const blocksSent = () => server.calls.filter((method) => method === 'fs/writeBlock').length;
    let sentBefore = -1;
    // Destroyed while its first blocks are still on their way (each answer takes three turns of the loop).
    const call = ((method: string, params: unknown) => {
      if (method === 'fs/writeBlock' && blocksSent() === 0)
        setImmediate(() => {
          sentBefore = blocksSent();
          writer.destroy();
        });
      return (server.call as (m: string, p: unknown) => Promise<unknown>)(method, params);
    }) as never;
    const writer: Writable = blockWriter(call, '/f', { blockSize: 4096 });
    writer.write(Buffer.alloc(4096 * 64, 1));
    await new Promise((resolve) => writer.once('close', resolve));
    expect(sentBefore).toBeGreaterThan(0);
    expect(blocksSent()).toBe(sentBefore);
    expect(server.calls.at(-1)).toBe('fs/close');
    expect(server.file().length).toBe(sentBefore * 4096);
  });
});
