/**
 * A server's stdin closes when it exits, and the loop may see that before it
 * has read the server's last messages: they must still be delivered.
 */
import { PassThrough, Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { ExecServerClient, type ProcessEvent } from '../../../src/index.js';

it('delivers what the server wrote before its input closed, even when the close is seen first', async () => {
  const input = new PassThrough();
  const answer = (line: object) => input.write(`${JSON.stringify(line)}\n`);
  let startId: number | undefined;
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        const request = JSON.parse(line) as { id?: number; method: string };
        if (request.method === 'initialize') answer({ id: request.id, result: { sessionId: 'link-end' } });
        if (request.method === 'process/start') startId = request.id;
      }
      done();
    },
  });
  const client = await ExecServerClient.connect(input, output, { clientName: 'link-end' });
  const starting = client.start({ processId: 'p', argv: ['true'] });
  await new Promise(setImmediate);
  answer({ id: startId, result: { processId: 'p' } });
  const session = await starting;
  // The input closes under the client first; the server's last words come one turn of the loop later.
  output.destroy();
  setImmediate(() => {
    answer({ method: 'process/exited', params: { processId: 'p', seq: 1, exitCode: 0 } });
    answer({ method: 'process/closed', params: { processId: 'p', seq: 2 } });
    input.end();
  });
  const events: ProcessEvent['type'][] = [];
  for await (const event of session) events.push(event.type);
  expect(events).toEqual(['exited', 'closed']);
  await client.close();
});
