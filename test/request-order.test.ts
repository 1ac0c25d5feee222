/**
 * EXT-CONCURRENCY: requests start in arrival order and, but for long-polls
 * and HTTP requests, finish in it. Pipelined fs requests on one path must
 * act as if sent one by one, and their answers leave in order.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { b64, ServerProcess } from './support/server-process.js';

let server: ServerProcess;
let dir: string;
beforeAll(async () => {
  server = await ServerProcess.started();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'request-order-'));
});
afterAll(async () => {
  await server.dispose();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Sends `requests` without waiting; resolves with their answers and the order their ids came back in. */
async function pipelined(requests: Array<[string, object]>) {
  const first = server.messages.length;
  const answers = await Promise.all(requests.map(([method, params]) => server.call(method, params)));
  const ids = new Set(answers.map((answer) => answer.id));
  const order = server.messages
    .slice(first)
    .filter((m) => ids.has(m.id) && !('method' in m))
    .map((m) => m.id);
  return { answers, inOrder: JSON.stringify(order) === JSON.stringify(answers.map((answer) => answer.id)) };
}

it('runs pipelined fs requests one after another, answering in order', async () => {
  const file = path.join(dir, 'f');
  const big = Buffer.alloc(8 * 1024 * 1024, 'A').toString('base64');
  const writes = await pipelined([
    ['fs/writeFile', { path: file, dataBase64: big }],
    ['fs/writeFile', { path: file, dataBase64: b64('BBBB') }],
  ]);
  expect(writes.inOrder).toBe(true);
  expect(fs.readFileSync(file, 'utf8')).toBe('BBBB');

  const read = await pipelined([
    ['fs/writeFile', { path: file, dataBase64: big }],
    ['fs/readFile', { path: file }],
  ]);
  expect(Buffer.from(read.answers[1]!.result.dataBase64, 'base64').length).toBe(8 * 1024 * 1024);

  const tree = path.join(dir, 'tree');
  fs.mkdirSync(tree);
  for (let i = 0; i < 300; i++) fs.writeFileSync(path.join(tree, `f${i}`), '');
  const rebuilt = await pipelined([
    ['fs/remove', { path: tree }],
    ['fs/createDirectory', { path: path.join(tree, 'a', 'b', 'c') }],
    ['fs/writeFile', { path: path.join(tree, 'a', 'b', 'c', 'new'), dataBase64: b64('x') }],
  ]);
  expect(rebuilt.answers.map((answer) => answer.result)).toEqual([{}, {}, {}]);
  expect(rebuilt.inOrder).toBe(true);
  expect(fs.readdirSync(tree)).toEqual(['a']);
  expect(fs.readFileSync(path.join(tree, 'a', 'b', 'c', 'new'), 'utf8')).toBe('x');
});

it('lets a long-poll read finish after the requests behind it', async () => {
  await server.request('process/start', { processId: 'poll', argv: ['sleep', '5'], cwd: dir, env: {}, tty: false });
  const result = await pipelined([
    ['process/read', { processId: 'poll', waitMs: 1000 }],
    ['fs/getMetadata', { path: dir }],
  ]).catch((error) => error);
  // The read waits up to 1 s for output that never comes; the metadata answer comes first.
  expect(result.inOrder).toBe(false);
  await server.request('process/terminate', { processId: 'poll' });
});

it("answers each pipelined process/start before any of that process's notifications, pipes and PTYs mixed", async () => {
  // PTYs open send pipe children through the spawner, whose start and a fast child's exit can come in one read.
  const starts: Array<[string, object]> = Array.from({ length: 60 }, (_, index) => [
    'process/start',
    { processId: `order-${index}`, argv: ['echo', 'x'], cwd: '/tmp', env: { PATH: '/usr/bin:/bin' }, tty: index % 2 === 0 },
  ]);
  const first = server.messages.length;
  const answers = await Promise.all(starts.map(([method, params]) => server.call(method, params)));
  for (let index = 0; index < starts.length; index++) await server.waitClosed(`order-${index}`);
  const seen = server.messages.slice(first);
  const early = answers.filter((answer, index) => {
    const answeredAt = seen.findIndex((m) => m.id === answer.id && !('method' in m));
    const toldAt = seen.findIndex((m) => m.method?.startsWith('process/') && m.params.processId === `order-${index}`);
    return toldAt < answeredAt;
  });
  expect(early).toEqual([]);
});
