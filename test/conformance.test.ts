/**
 * Every answer and notification of the real server, in both generations,
 * matches the protocol table exactly: parsing it with the declared schema
 * loses nothing (zod strips unknown members, so an extra member fails too).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MethodName, resultSchemaOf } from '../src/protocol/methods.js';
import { Notifications, type NotificationName } from '../src/protocol/notifications.js';
import { closeLoopback, listenLoopback } from './support/loopback.js';
import { b64, BASE_ENV, ServerProcess } from './support/server-process.js';

let dir: string;
let web: http.Server;
let baseUrl: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-'));
  web = http.createServer((_request, response) => response.end('body'));
  baseUrl = await listenLoopback(web);
});

afterAll(async () => {
  await closeLoopback(web);
  fs.rmSync(dir, { recursive: true, force: true });
});

function conforms(method: MethodName, result: unknown): void {
  expect(resultSchemaOf(method).parse(result), method).toEqual(result);
}

async function exercise(server: ServerProcess, toPath: (native: string) => string): Promise<void> {
  const call = async (method: MethodName, params: unknown) => conforms(method, await server.request(method, params));
  await call('initialize', { clientName: 'conformance' });
  server.notify('initialized', {});
  const file = path.join(dir, `f-${Math.random()}`);
  await call('process/start', { processId: 'pipe', argv: ['cat'], cwd: toPath(dir), env: BASE_ENV, tty: false, pipeStdin: true });
  // Generation 2 requires a writeId; in generation 1 it would show generation 2.
  const writeId = toPath(dir).startsWith('file:') ? { writeId: 'w1' } : {};
  await call('process/write', { processId: 'pipe', chunk: b64('hi\n'), ...writeId });
  await call('process/signal', { processId: 'pipe', signal: 'SIGCONT' });
  await call('process/terminate', { processId: 'pipe' });
  await server.waitClosed('pipe');
  await call('process/read', { processId: 'pipe' });
  await call('process/start', { processId: 'pty', argv: ['sh', '-c', 'echo tty'], cwd: toPath(dir), env: BASE_ENV, tty: true });
  await call('process/resize', { processId: 'pty', rows: 30, cols: 100 });
  await server.waitClosed('pty');
  await call('process/read', { processId: 'pty', afterSeq: 0 });
  await call('environment/info', {});
  await call('environment/status', null);
  await call('fs/writeFile', { path: toPath(file), dataBase64: b64('data') });
  await call('fs/readFile', { path: toPath(file) });
  await call('fs/getMetadata', { path: toPath(file) });
  await call('fs/createDirectory', { path: toPath(`${file}.d/sub`) });
  await call('fs/readDirectory', { path: toPath(dir) });
  await call('fs/copy', { sourcePath: toPath(file), destinationPath: toPath(`${file}.copy`), recursive: false });
  await call('fs/canonicalize', { path: toPath(file) });
  await call('fs/remove', { path: toPath(`${file}.d`) });
  await call('http/request', { method: 'GET', url: baseUrl, requestId: 'plain' });
  await call('http/request', { method: 'GET', url: baseUrl, requestId: 'streamed', streamResponse: true });
  await server.waitFor((m) => m.method === 'http/request/bodyDelta' && m.params.done === true);
}

describe.each([
  ['generation 1 (native paths)', (native: string) => native],
  ['generation 2 (file:// URIs)', (native: string) => pathToFileURL(native).href],
])('the server conforms to the protocol table in %s', (_name, toPath) => {
  it('answers every method with its declared result, and notifies with declared params', async () => {
    const server = new ServerProcess();
    try {
      await exercise(server, toPath);
      const seen = new Set<string>();
      for (const message of server.messages.filter((m) => 'method' in m)) {
        const name = message.method as NotificationName;
        expect(Object.hasOwn(Notifications, name), name).toBe(true);
        expect(Notifications[name].params.parse(message.params), name).toEqual(message.params);
        seen.add(name);
      }
      expect([...seen].sort()).toEqual(['http/request/bodyDelta', 'process/closed', 'process/exited', 'process/output']);
    } finally {
      await server.dispose();
    }
  });
});
