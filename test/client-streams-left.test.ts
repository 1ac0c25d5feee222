/**
 * Output streams whose reader leaves: a loop left early, an unpipe, a stream
 * asked for after another consumer took the events. None may hold the
 * server's output back for good (the whole connection waits on a hold), and
 * none may be left without an end.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecServerClient } from '../src/index.js';

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

  it('ends a stream asked for once the session is over and another consumer took its events', async () => {
    const session = await client.start({ argv: ['echo', 'hello'] });
    const closed = new Promise((resolve) => session.once('closed', resolve));
    await closed;
    const ended = new Promise((resolve) => session.stdout.once('end', resolve).resume());
    await ended;
    expect(session.done).toBe(true);
  });
});
