import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecServerClient } from '../src/index.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/**
 * Whether what `ref` points at is collected once nothing of ours holds it:
 * within seconds, since a stream's last requests (its fs/close) may still
 * be in flight.
 */
async function collected(ref: WeakRef<object>): Promise<boolean> {
  // A second when idle; ten at most, for a loaded machine.
  const deadline = Date.now() + 10_000;
  while (ref.deref() !== undefined && Date.now() < deadline) {
    await sleep(20);
    gc();
  }
  return ref.deref() === undefined;
}

describe('a client keeps no result it has handed over', () => {
  let client: ExecServerClient;
  beforeAll(async () => {
    client = await ExecServerClient.spawn({ clientName: 'memory-test' });
  });
  afterAll(async () => {
    await client.close();
  });

  it('lets an answered result go while the connection stays up', async () => {
    // A result racing a promise that stays pending for the connection's life stayed reachable from it.
    let result: object | undefined = await client.request('fs/getMetadata', { path: '/tmp' });
    const ref = new WeakRef(result);
    result = undefined;
    expect(await collected(ref)).toBe(true);
  });

  /** Reads the file to its end, keeping only weak references to its chunks (in a frame of its own, gone on return). */
  async function readWeakly(file: string, blockSize: number): Promise<WeakRef<object>[]> {
    const refs: WeakRef<object>[] = [];
    const reader = client.openRead(file, { blockSize });
    // 'data' hands over each block as it came (an iterator's read() may join buffered ones into a new buffer).
    reader.on('data', (chunk: Buffer) => refs.push(new WeakRef(chunk)));
    await once(reader, 'end');
    return refs;
  }

  it('lets the blocks of a finished openRead go', async () => {
    // Whole 1 MiB blocks: their answers arrive decoded, and each block is the very buffer of its answer.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-memory-'));
    const file = path.join(dir, 'three-mib');
    fs.writeFileSync(file, Buffer.alloc(3 * 1024 * 1024, 7));
    const refs = await readWeakly(file, 1024 * 1024);
    fs.rmSync(dir, { recursive: true, force: true });
    expect(refs.length).toBe(3);
    for (const ref of refs) expect(await collected(ref)).toBe(true);
  });
});
