import { EventEmitter } from 'node:events';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { webSocketStreams } from '../../../src/transport/websocket-streams.js';

/** Enough of a `ws` socket for the streams: records the messages sent, joined from their fragments. */
class RecordingSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  readonly sent: string[] = [];
  readonly fragments: number[] = [];
  private current: Buffer[] = [];
  send(data: Buffer, options: { binary: boolean; fin: boolean }, callback: () => void): void {
    expect(options.binary).toBe(false);
    this.current.push(Buffer.from(data)); // a copy: the writer may reuse its buffer once called back
    if (options.fin) {
      this.fragments.push(this.current.length);
      this.sent.push(Buffer.concat(this.current).toString());
      this.current = [];
    }
    setImmediate(callback);
  }
  close(): void {}
}

/** Writes each piece in turn, waiting for its callback, as the line writer's slices go. */
async function writeAll(output: NodeJS.WritableStream, pieces: string[]): Promise<void> {
  for (const piece of pieces) await new Promise((resolve) => output.write(piece, resolve));
}

describe('webSocketStreams output', () => {
  it('sends one frame per line, however the lines are cut into writes', async () => {
    const line = fc.string({ unit: fc.constantFrom('a', 'b', '{', '"', 'é', '1'), maxLength: 40 });
    await fc.assert(
      fc.asyncProperty(fc.array(line, { minLength: 1, maxLength: 8 }), fc.array(fc.nat(400), { maxLength: 10 }), async (lines, cuts) => {
        const socket = new RecordingSocket();
        const { output } = webSocketStreams(socket as unknown as WebSocket);
        const text = lines.map((l) => `${l}\n`).join('');
        const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
        const pieces = [0, ...points].map((from, i) => text.slice(from, [...points, text.length][i])).filter(Boolean);
        await writeAll(output, pieces);
        expect(socket.sent).toEqual(lines);
      }),
      { numRuns: 200 },
    );
  });

  it('joins a line streamed in many slices into one frame', async () => {
    const socket = new RecordingSocket();
    const { output } = webSocketStreams(socket as unknown as WebSocket);
    const slices = Array.from({ length: 300 }, (_, i) => `${String(i % 10).repeat(1000)}`);
    await writeAll(output, ['{"id":1,"params":"', ...slices, '"}\n{"id":2}\n']);
    expect(socket.sent).toEqual([`{"id":1,"params":"${slices.join('')}"}`, '{"id":2}']);
    expect(socket.fragments).toEqual([302, 1]); // sent as its slices came, never joined
  });
});

describe('webSocketStreams input', () => {
  it('makes each message a line, its raw line breaks spaces, whatever form ws hands it in', async () => {
    const socket = new RecordingSocket();
    const { input } = webSocketStreams(socket as unknown as WebSocket);
    const read: Buffer[] = [];
    input.on('data', (bytes: Buffer) => read.push(bytes));
    socket.emit('message', Buffer.from('{"id":1,\r\n"x":"é"}'), false);
    socket.emit('message', [Buffer.from('{"id":'), Buffer.from('2}')], false);
    socket.emit('message', new Uint8Array(Buffer.from('{"id":3}')).buffer, false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(Buffer.concat(read).toString()).toBe('{"id":1,  "x":"é"}\n{"id":2}\n{"id":3}\n');
  });
});
