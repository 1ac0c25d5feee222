/**
 * Answers longer than anything a client sends: a buffered HTTP body whose
 * base64 is longer than V8's longest string (about 512 MiB), through the
 * real server and the client library.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecServerClient } from '../src/index.js';
import { closeLoopback, listenLoopback } from './support/loopback.js';
import { childrenOf, findByCmdline, memoryBytes } from './support/proc.js';

const MiB = 1024 * 1024;
/** 400 MiB: its base64 (560 MB) is past V8's longest string and the readers' 256 MiB default. */
const BODY_MIB = 400;

const PATTERN = Buffer.allocUnsafe(MiB);
for (let i = 0; i < MiB; i += 4) PATTERN.writeUInt32LE((i * 2654435761) >>> 0, i);

/** Block `index` of the body, made as it is sent (the test holds no second copy); each starts with its number. */
function block(index: number): Buffer {
  const bytes = Buffer.from(PATTERN);
  bytes.writeUInt32LE(index, 0);
  return bytes;
}

/** A memory figure of a process from /proc (VmRSS now, VmHWM its peak), KiB. */

let web: http.Server;
let base: string;
let client: ExecServerClient;
const expected = createHash('sha256');

beforeAll(async () => {
  for (let i = 0; i < BODY_MIB; i++) expected.update(block(i));
  web = http.createServer(async (_req, res) => {
    res.setHeader('content-length', BODY_MIB * MiB);
    for (let i = 0; i < BODY_MIB; i++) {
      if (!res.write(block(i))) await new Promise((resolve) => res.once('drain', resolve));
    }
    res.end();
  });
  base = await listenLoopback(web);
  client = await ExecServerClient.spawn({ clientName: 'large-answers' });
});
afterAll(async () => {
  await client?.close();
  await closeLoopback(web);
});

describe('answers longer than a string', () => {
  it('brings a 400 MiB buffered HTTP body whole, the server holding it about once', async () => {
    // This worker's server (a child left by an earlier file in the same worker may still be going).
    const servers = new Set(findByCmdline('cli/main.js'));
    const [server] = childrenOf(process.pid).filter((pid) => servers.has(pid));
    const before = memoryBytes(server!, 'VmRSS');
    const response = await client.httpRequest({ method: 'GET', url: `${base}/big` });
    expect(response.status).toBe(200);
    expect(response.body.length).toBe(BODY_MIB * MiB);
    expect(createHash('sha256').update(response.body).digest('hex')).toBe(expected.digest('hex'));
    // The body declares its length: its chunks are copied into one buffer as they come, not kept
    // to the end and then copied (which held it twice).
    expect((memoryBytes(server!, 'VmHWM') - before) / MiB).toBeLessThan(BODY_MIB * 1.5);
  }, 60_000);
});
