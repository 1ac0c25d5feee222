/**
 * `close()` on every executor kind: a call under way when it begins fails
 * with the same "the executor is closed" (a long-poll woken by the kill of
 * its process included), every later call fails the same way, and nothing
 * the executor started is left running.
 */
import { describe, expect, it, vi } from 'vitest';
import { LocalExecutor } from '../src/index.js';
import { executorKinds } from './support/executors.js';
import { findByCmdline, waitDead } from './support/proc.js';

const ENV = { PATH: '/usr/bin:/bin' };
const closedError = { kind: 'disconnected', message: expect.stringContaining('the executor is closed') };

describe.each(executorKinds)('close() on $name', ({ create }) => {
  it('fails a long-poll under way and every later call alike, and kills what it started', async () => {
    const executor = await create();
    const marker = String(30 + Math.random()).slice(0, 8);
    await executor.start({ processId: 'poll', argv: ['sleep', marker], cwd: '/tmp', env: ENV, tty: false });
    const polling = executor.read({ processId: 'poll', afterSeq: 0, waitMs: 20_000 });
    const settled = polling.then(
      () => 'answered',
      (error) => error,
    );
    await executor.close();
    expect(await settled).toMatchObject(closedError);
    await expect(executor.read({ processId: 'poll' })).rejects.toMatchObject(closedError);
    await expect(executor.write('poll', Buffer.from('x'))).rejects.toMatchObject(closedError);
    await expect(executor.readFile('/etc/hostname')).rejects.toMatchObject(closedError);
    expect(await waitDead(findByCmdline(marker, 'sleep'))).toEqual([]);
  });
});

describe('close() on a LocalExecutor while a start is under way', () => {
  it('fails the start as closed, starts nothing and warns of nothing', async () => {
    const warnings = vi.spyOn(process.stderr, 'write');
    try {
      for (let round = 0; round < 5; round++) {
        const executor = new LocalExecutor();
        await executor.environmentInfo(); // ready: the start below reaches the pipe pool at once
        const marker = String(30 + Math.random()).slice(0, 8);
        const starting = executor.start({ processId: 'x', argv: ['sleep', marker], cwd: '/tmp', env: ENV, tty: false });
        await executor.close();
        await expect(starting).rejects.toMatchObject(closedError);
        expect(await waitDead(findByCmdline(marker, 'sleep'))).toEqual([]);
      }
      expect(warnings.mock.calls.map(([text]) => String(text)).filter((text) => text.includes('exec-server'))).toEqual([]);
    } finally {
      warnings.mockRestore();
    }
  });
});
