import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Message } from 'vscode-jsonrpc';
import { LineMessageReader } from '../../../src/transport/line-reader.js';

/** What a reader with `options` hands on, and what it reports invalid, for `input` written in one go. */
async function read(input: string, options: ConstructorParameters<typeof LineMessageReader>[1]) {
  const stream = new PassThrough();
  const messages: Message[] = [];
  const invalid: string[] = [];
  const reader = new LineMessageReader(stream, { ...options, onInvalidLine: (error) => invalid.push(error.message) });
  reader.listen((message) => messages.push(message));
  stream.end(input);
  await new Promise((resolve) => setImmediate(resolve));
  return { messages, invalid };
}

describe('LineMessageReader: lines over the limit', () => {
  const long = 'x'.repeat(200);

  it("fails a client's too-long answer alone, by its id, and reads on", async () => {
    const input = `{"id":7,"result":{"x":"${long}"}}\n{"id":"s-1","error":{"code":1,"message":"${long}"}}\n{"id":8,"result":{}}\n`;
    const { messages, invalid } = await read(input, { maxLineBytes: 100, answerPayloads: true });
    expect(invalid).toEqual([]);
    const failure = { code: -32600, message: expect.stringContaining('the answer exceeds 100 bytes') };
    expect(messages).toEqual([
      { id: 7, error: failure },
      { id: 's-1', error: failure },
      { id: 8, result: {} },
    ]);
  });

  it('finds the id even when the line begins at the very end of a read', async () => {
    const stream = new PassThrough();
    const messages: Message[] = [];
    const reader = new LineMessageReader(stream, { maxLineBytes: 100, answerPayloads: true });
    reader.listen((message) => messages.push(message));
    stream.write('{"id":1,"result":{}}\n{"');
    stream.write('id":9,"result":{"x":"');
    stream.end(`${long}"}}\n`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(messages).toEqual([
      { id: 1, result: {} },
      { id: 9, error: expect.objectContaining({ code: -32600 }) },
    ]);
  });

  it('reports a too-long line without an id first (a notification), and any too-long line a server reads', async () => {
    const notification = `{"method":"process/output","params":{"chunk":"${long}"}}\n`;
    expect((await read(notification, { maxLineBytes: 100, answerPayloads: true })).invalid).toEqual([
      'Invalid Request: message exceeds 100 bytes',
    ]);
    const request = `{"id":7,"method":"fs/readFile","params":{"path":"${long}"}}\n`;
    expect(await read(request, { maxLineBytes: 100 })).toEqual({ messages: [], invalid: ['Invalid Request: message exceeds 100 bytes'] });
  });
});
