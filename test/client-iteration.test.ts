/** How a process session hands over its events: iterated with `for await` (leaving the loop early detaches it), or to listeners. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecServerClient, type ProcessEvent } from '../src/index.js';

const FAKE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'support/fake-server.mjs');

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

it('returns from a timed-out run whose process exited by itself but left a job holding its output, with its own exit code', async () => {
  const started = Date.now();
  // bash must exit within the timeout by itself (else it is killed: 137): a roomy one, for a loaded machine.
  const result = await client.run(['bash', '-c', 'sleep 30 & echo started; exit 4'], { timeoutMs: 2000 });
  expect(result).toMatchObject({ timedOut: true, exitCode: 4 });
  expect(result.stdout.toString()).toBe('started\n');
  expect(Date.now() - started).toBeLessThan(10_000); // not the 30 s the job holds the pipe
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

describe('session listeners', () => {
  it('hand the backlog to the first listener, even events that arrived before start() resolved', async () => {
    const client = await ExecServerClient.spawn({ command: process.execPath, args: [FAKE, 'reorder'], initializeTimeoutMs: 5000 });
    try {
      // In this scenario every event arrives before the start response.
      const session = await client.start({ argv: ['x'], processId: 'p' });
      const seen: ProcessEvent[] = [];
      const closed = new Promise<void>((resolve) =>
        session.on('event', (event: ProcessEvent) => {
          seen.push(event);
          if (event.type === 'closed') resolve();
        }),
      );
      await closed;
      expect(seen.map((e) => ('seq' in e ? e.seq : 0))).toEqual([1, 2, 3, 4, 5]);
    } finally {
      await client.close();
    }
  });
});

it('refuses a NaN or negative timeout before it starts anything', async () => {
  for (const timeoutMs of [Number.NaN, -1]) {
    await expect(client.run(['true'], { timeoutMs })).rejects.toThrow(`timeoutMs must be a number of milliseconds >= 0, got ${timeoutMs}`);
  }
});
