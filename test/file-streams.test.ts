import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { ExecServerClient, LocalExecutor } from '../src/index.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-file-streams-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const file = path.join(dir, 'small');
fs.writeFileSync(file, 'small file');

/** The 'error' events `stream` emits from now on. */
function errorsOf(stream: NodeJS.EventEmitter): Error[] {
  const errors: Error[] = [];
  stream.on('error', (error: Error) => errors.push(error));
  return errors;
}

describe('file streams when their client goes away', () => {
  it('a reader that ended stays quiet when its client closes (no error after end)', async () => {
    const client = await ExecServerClient.spawn({ clientName: 'streams-test' });
    const reader = client.openRead(file);
    const errors = errorsOf(reader);
    const parts: Buffer[] = [];
    reader.on('data', (part: Buffer) => parts.push(part));
    await once(reader, 'end');
    await client.close();
    await sleep(50); // an error would be emitted on a later tick
    expect(Buffer.concat(parts).toString()).toBe('small file');
    expect(errors).toEqual([]);
  });

  it('a reader or writer destroyed after its client closed is destroyed without an error', async () => {
    const client = await ExecServerClient.spawn({ clientName: 'streams-test' });
    const reader = client.openRead(file);
    const writer = client.openWrite(path.join(dir, 'out'));
    await Promise.all([once(reader, 'readable'), new Promise((written) => writer.write('x', written))]);
    const errors = [...errorsOf(reader), ...errorsOf(writer)];
    await client.close();
    reader.destroy();
    writer.destroy();
    await Promise.all([once(reader, 'close'), once(writer, 'close')]);
    expect(errors).toEqual([]);
  });

  it('a closed LocalExecutor refuses new calls and fails its open streams, saying it is closed', async () => {
    const executor = new LocalExecutor();
    const reader = executor.openRead(file, { blockSize: 1 });
    await once(reader, 'readable');
    const failed = once(reader, 'error'); // reads still under way when it closes fail too
    const closing = executor.close();
    expect(executor.close()).toBe(closing); // a second close waits for the same end
    await closing;
    reader.resume();
    const [error] = (await failed) as [Error];
    expect(error.message).toMatch(/the executor is closed/);
    await expect(executor.readFile(file)).rejects.toThrow(/the executor is closed/);
    const late = executor.openRead(file);
    const [lateError] = (await once(late, 'error')) as [Error];
    expect(lateError.message).toMatch(/the executor is closed/);
  });

  it('a LocalExecutor call under way when close() begins fails saying the executor is closed', async () => {
    const executor = new LocalExecutor();
    await executor.readFile(file); // the session is up
    const reader = executor.openRead(file);
    await new Promise(setImmediate); // its fs/open is opening the file
    const failed = once(reader, 'error');
    await executor.close();
    const [error] = (await failed) as [Error];
    expect(error.message).toMatch(/the executor is closed/);
  });
});

describe('file streams in process', () => {
  it("keep only a small file's bytes, not the block's memory, in each chunk (LocalExecutor hands them over as they are)", async () => {
    const executor = new LocalExecutor();
    try {
      const chunks: Buffer[] = [];
      for (let i = 0; i < 3; i++) for await (const chunk of executor.openRead(file)) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks).toString()).toBe('small file'.repeat(3));
      for (const chunk of chunks) expect(chunk.buffer.byteLength).toBeLessThan(64 * 1024);
    } finally {
      await executor.close();
    }
  });
});
