import { describe, expect, it } from 'vitest';
import { SessionOutput } from '../../../src/sessions/session-output.js';

const euro = Buffer.from('€');

describe('SessionOutput', () => {
  it('hands over what came since the last take, once', () => {
    const output = new SessionOutput(1000);
    output.push(Buffer.from('one '));
    output.push(Buffer.from('two'));
    expect(output.take(true)).toBe('one two');
    expect(output.take(true)).toBe('');
  });

  it('holds an unfinished character back for the next take, unless it is the last', () => {
    const output = new SessionOutput(1000);
    output.push(Buffer.concat([Buffer.from('a'), euro.subarray(0, 2)]));
    expect(output.take(true)).toBe('a');
    output.push(euro.subarray(2));
    expect(output.take(true)).toBe('€');
    output.push(euro.subarray(0, 1));
    expect(output.take(false)).toBe('\ufffd');
  });

  it('keeps head and tail of what piles up between takes, the middle marked', () => {
    const output = new SessionOutput(200);
    output.push(Buffer.from('HEAD'));
    for (let i = 0; i < 1000; i++) output.push(Buffer.from('€'));
    output.push(Buffer.from('TAIL'));
    const text = output.take(true);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(200);
    expect(text).toMatch(/^HEAD€+\n…\d+ bytes truncated…\n€+TAIL$/);
    const removed = Number(/…(\d+) bytes/.exec(text)![1]);
    const kept = Buffer.byteLength(text.replace(/\n…\d+ bytes truncated…\n/, ''));
    expect(removed + kept).toBe(3008);
  });

  it('ends a wait on wake, or at its time', async () => {
    const output = new SessionOutput(1000);
    const woken = output.waitForEnd(60_000);
    output.wake();
    await woken;
    const started = Date.now();
    await output.waitForEnd(20);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
  });
});
