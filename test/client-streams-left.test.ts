/**
 * Output streams whose reader leaves: a loop left early, an unpipe, a stream
 * asked for after another consumer took the events. None may hold the
 * server's output back for good (the whole connection waits on a hold), and
 * none may be left without an end.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecServerClient } from '../src/index.js';
import { bodyServer, closeLoopback, listenLoopback } from './support/loopback.js';

let client: ExecServerClient;
beforeAll(async () => {
  client = await ExecServerClient.spawn({ clientName: 'streams-left' });
});
afterAll(async () => {
  await client.close();
});

describe('an output stream its reader left', () => {
  it('holds nothing back once a for-await loop over it was left early', async () => {
    const session = await client.start({ argv: ['head', '-c', '2000000', '/dev/zero'] });
    for await (const _chunk of session.stdout) break;
    expect(await session.wait()).toBe(0);
  });

  it('holds nothing back once it was unpiped from a slow destination', async () => {
    const session = await client.start({ argv: ['head', '-c', '8000000', '/dev/zero'] });
    let taken = 0;
    const slow = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        taken += chunk.length;
        setTimeout(callback, 5);
      },
    });
    const unpiped = new Promise<void>((resolve) =>
      slow.on('pipe', () => {
        const check = setInterval(() => {
          if (taken < 512 * 1024) return; // well behind by now: the stream is full and held
          clearInterval(check);
          session.stdout.unpipe(slow);
          resolve();
        }, 5);
      }),
    );
    session.stdout.pipe(slow);
    await unpiped;
    expect(await session.wait()).toBe(0);
  });

  it('keeps nothing of a streamed HTTP body whose loop was left early', async () => {
    const total = 96 * 1024 * 1024;
    const origin = bodyServer(total, 1024 * 1024);
    const url = await listenLoopback(origin.server);
    try {
      const response = await client.httpRequestStream({ method: 'GET', url });
      for await (const _chunk of response.body) break;
      const before = process.memoryUsage().arrayBuffers;
      // The rest still comes (the protocol cannot stop it): other work goes on meanwhile.
      while (origin.sent() < total) await client.run(['true']);
      for (let i = 0; i < 5; i++) await client.run(['true']);
      expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(24 * 1024 * 1024);
    } finally {
      await closeLoopback(origin.server);
    }
  });

  it('ends a stream asked for once the session is over and another consumer took its events', async () => {
    const session = await client.start({ argv: ['echo', 'hello'] });
    const closed = new Promise((resolve) => session.once('closed', resolve));
    await closed;
    const ended = new Promise((resolve) => session.stdout.once('end', resolve).resume());
    await ended;
    expect(session.done).toBe(true);
  });
});
