import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Base64Payload } from '../../../src/protocol/base64-payload.js';
import { LineMessageWriter } from '../../../src/transport/line-writer.js';

/** Everything the writer printed, as parsed lines, once `writes` have settled; and its largest single write. */
async function printed(writes: (writer: LineMessageWriter) => Array<Promise<void>>): Promise<{ lines: unknown[]; largestWrite: number }> {
  const output = new PassThrough();
  const parts: Buffer[] = [];
  output.on('data', (part: Buffer) => parts.push(part));
  await Promise.all(writes(new LineMessageWriter(output)));
  const lines = Buffer.concat(parts)
    .toString()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  return { lines, largestWrite: Math.max(...parts.map((part) => part.length)) };
}

const bytes = (length: number) => Buffer.from(Array.from({ length }, (_, i) => (i * 13) & 0xff));

describe('LineMessageWriter: payloads', () => {
  it('writes a Base64Payload in a request’s params as its base64 text, small or streamed in slices', async () => {
    const large = bytes(300_001);
    const small = bytes(10);
    const { lines, largestWrite } = await printed((writer) => [
      writer.write({
        jsonrpc: '2.0',
        id: 1,
        method: 'fs/writeBlock',
        params: { handleId: 'h', offset: 0, chunk: new Base64Payload(large) },
      }),
      writer.write({
        jsonrpc: '2.0',
        id: 2,
        method: 'fs/writeBlock',
        params: { handleId: 'h', offset: 9, chunk: new Base64Payload(small) },
      }),
    ]);
    expect(lines).toEqual([
      { id: 1, method: 'fs/writeBlock', params: { handleId: 'h', offset: 0, chunk: large.toString('base64') } },
      { id: 2, method: 'fs/writeBlock', params: { handleId: 'h', offset: 9, chunk: small.toString('base64') } },
    ]);
    // Streamed: the 400 KB of base64 never went out (or existed) as one string.
    expect(largestWrite).toBeLessThanOrEqual(64 * 1024);
  });

  it('keeps lines whole and in order around a streamed payload, in answers as in requests', async () => {
    const large = bytes(500_000);
    const { lines } = await printed((writer) => [
      writer.write({ jsonrpc: '2.0', id: 1, result: { chunk: new Base64Payload(large), eof: true } }),
      writer.write({ jsonrpc: '2.0', method: 'process/exited', params: { processId: 'p', seq: 2, exitCode: 0 } }),
      writer.write({ jsonrpc: '2.0', id: 3, method: 'process/write', params: { processId: 'p', chunk: new Base64Payload(large) } }),
      writer.write({ jsonrpc: '2.0', id: 4, result: {} }),
    ]);
    expect(lines).toEqual([
      { id: 1, result: { chunk: large.toString('base64'), eof: true } },
      { method: 'process/exited', params: { processId: 'p', seq: 2, exitCode: 0 } },
      { id: 3, method: 'process/write', params: { processId: 'p', chunk: large.toString('base64') } },
      { id: 4, result: {} },
    ]);
  });
});

describe('LineMessageWriter: errors', () => {
  it("hands the output's own error on (its message, not vscode-jsonrpc's 'Reason: unknown')", async () => {
    const output = new PassThrough();
    const writer = new LineMessageWriter(output);
    const seen = new Promise<unknown>((resolve) => writer.onError(([error]) => resolve(error)));
    output.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(await seen).toMatchObject({ message: 'write EPIPE', code: 'EPIPE' });
  });

  it('gives back the payloads of answers it can no longer send, small and large (an answer budget waits on them)', async () => {
    const output = new PassThrough();
    const writer = new LineMessageWriter(output);
    const closed = new Promise((resolve) => output.once('close', resolve));
    output.destroy();
    await closed;
    const released: number[] = [];
    for (const [id, length] of [
      [1, 10],
      [2, 300_001],
    ])
      await writer.write({ jsonrpc: '2.0', id, result: { dataBase64: new Base64Payload(bytes(length), () => released.push(id)) } });
    expect(released).toEqual([1, 2]);
  });
});
