/**
 * A WebSocket's drop ends its input too (`endsWithInput`): what was read
 * before the drop, even while a slow consumer held the link, is delivered
 * before the link drops. It already left the server, and a resume could
 * only ask for the last MiB of it again.
 */
import { PassThrough, Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { Link, type LinkEvents } from '../../../src/client/link.js';

function linkOver(endsWithInput: boolean) {
  const input = new PassThrough();
  const output = new Writable({ write: (_chunk, _encoding, done) => done() });
  const seen: string[] = [];
  const events: LinkEvents = {
    notification: (_method, params) => seen.push(`seq ${(params as { seq: number }).seq}`),
    preview: () => false,
    invalidLine: (line) => seen.push(`invalid ${line}`),
    dropped: (reason) => seen.push(`dropped: ${reason}`),
    onlyHeldWait: () => true,
  };
  const link = new Link({ input, output, endsWithInput }, events);
  return { input, output, seen, link };
}

const output = (seq: number) =>
  `${JSON.stringify({ method: 'process/output', params: { processId: 'p', seq, stream: 'stdout', chunk: 'eA==' } })}\n`;

it('delivers what was read before a WebSocket dropped, while a consumer held the link, then drops', async () => {
  const { input, output: out, seen, link } = linkOver(true);
  link.hold(); // a slow consumer: the input is paused, and lines wait in it
  for (let seq = 1; seq <= 50; seq++) input.write(output(seq));
  // The socket closes: its output is destroyed and its input ended, as websocket-streams.ts does.
  out.destroy();
  input.end();
  await link.whenDown();
  expect(seen).toEqual([...Array.from({ length: 50 }, (_, i) => `seq ${i + 1}`), 'dropped: the server closed its output']);
});
