/**
 * Property-based input fuzzing of the real server (fast-check): each case
 * writes a few generated lines, then a probe request. Properties: the server
 * stays up, the probe is answered once, stdout carries only JSON-RPC
 * messages, and at the end every request that had a unique usable id got
 * exactly one answer. `FUZZ_RUNS=N` runs more cases; a failure prints the
 * shrunk lines.
 */
import fc from 'fast-check';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fuzzLine } from './support/fuzz-lines.js';
import { ServerProcess, type Json } from './support/server-process.js';

// FUZZ_RUNS=20000 for a long run; the suite keeps to 1000 for its time.
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
let root: string;
let server: ServerProcess;
let owed: Array<string | number> = [];
let counter = 0;
const nextId = () => ++counter;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-fuzz-'));
  fs.mkdirSync(`${root}/t/sub`, { recursive: true }); // so that starts and fs calls often succeed
  server = await ServerProcess.started([], { ...process.env, EXEC_SERVER_SPAWNER: 'never' });
});
afterAll(async () => {
  await server.dispose();
  fs.rmSync(root, { recursive: true, force: true });
});

function isJsonRpc(message: Json): boolean {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return false;
  if (typeof message.method === 'string') return !('id' in message);
  return 'id' in message && 'result' in message !== 'error' in message;
}

async function alive(): Promise<ServerProcess> {
  if (server.child.exitCode === null && server.child.signalCode === null) return server;
  server = await ServerProcess.started([], { ...process.env, EXEC_SERVER_SPAWNER: 'never' });
  owed = [];
  return server;
}

it(`survives ${RUNS} cases of generated and mutated input and answers every usable id once`, async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fuzzLine(`${root}/t`, nextId), { minLength: 1, maxLength: 4 }), async (lines) => {
      const current = await alive();
      const probeId = `probe-${nextId()}`;
      for (const line of lines) current.sendLine(Buffer.from(`${line.latin1}\n`, 'latin1'));
      current.send({ id: probeId, method: 'fs/getMetadata', params: { path: root } });
      const died = current.exited.then(({ code, signal }) => ({ died: { code, signal, stderr: current.stderr.slice(-500) } }));
      const answer: Json = await Promise.race([current.waitFor((m) => m.id === probeId, 5000), died]);
      expect(answer).toMatchObject({ result: { isDirectory: true } });
      expect(current.child.exitCode).toBeNull();
      for (const line of lines) if (line.usableId !== undefined) owed.push(line.usableId);
    }),
    { numRuns: RUNS, endOnFailure: false, interruptAfterTimeLimit: 120_000 },
  );
  const last = server;
  await last.close();
  const answers = new Map<unknown, number>();
  for (const message of last.messages) if (!('method' in message)) answers.set(message.id, (answers.get(message.id) ?? 0) + 1);
  expect(owed.filter((id) => answers.get(id) !== 1)).toEqual([]);
  expect(last.messages.filter((m) => !isJsonRpc(m))).toEqual([]);
  expect(last.stderr).not.toMatch(/TypeError|RangeError|uncaught|unhandled/i);
}, 180_000);

it('answers a request after a line over the limit, and after 100k nesting levels', async () => {
  const current = await alive();
  current.sendLine(`{"id":"huge","method":"fs/writeFile","params":{"path":"${root}/x","dataBase64":"${'A'.repeat(9 * 1024 * 1024)}"}}`);
  current.sendLine('['.repeat(100_000) + ']'.repeat(100_000));
  expect((await current.call('fs/getMetadata', { path: root })).result.isDirectory).toBe(true);
});
