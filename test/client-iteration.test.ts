/** A process session iterated with `for await`: leaving the loop early detaches it. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ExecServerClient } from '../src/index.js';

let client: ExecServerClient;
beforeAll(async () => {
  client = await ExecServerClient.spawn({ clientName: 'iteration-test' });
});
afterAll(async () => {
  await client.close();
});

it('stops collecting events for a loop that broke out, while the process goes on', async () => {
  const session = await client.start({ argv: ['sh', '-c', 'echo first; exec sleep 30'] });
  for await (const event of session) if (event.type === 'output') break;
  // Another way in still works, and the broken loop's queue is gone (it would keep every later event).
  const consumers = (session as unknown as { consumers: Set<unknown> }).consumers;
  expect(consumers.size).toBe(0);
  await session.terminate();
  const later: string[] = [];
  for await (const event of session) later.push(event.type);
  expect(later).toContain('closed');
});

it('returns from a timed-out run once the process is killed, even if an escaped descendant holds its output', async () => {
  const started = Date.now();
  const result = await client.run(['sh', '-c', 'setsid sleep 3 & sleep 30'], { timeoutMs: 200 });
  expect(result).toMatchObject({ timedOut: true, exitCode: 137 });
  expect(Date.now() - started).toBeLessThan(2500); // not the 3 s the escaped sleep holds the pipe
});

it('gives buffered events to the first consumer, a listener registered before an iterator in the same tick', async () => {
  const session = await client.start({ argv: ['sh', '-c', 'echo done'] });
  await session.wait(); // everything is buffered by now
  const heard: string[] = [];
  const closed = new Promise((resolve) => session.once('closed', resolve));
  session.on('event', (event) => heard.push(event.type));
  const iterated: string[] = [];
  for await (const event of session) iterated.push(event.type);
  await closed;
  expect(heard).toEqual(['output', 'exited', 'closed']);
  expect(iterated).toEqual([]);
});
