/** The server and client as libraries in one Node process, over in-memory streams. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { ErrorCode, ExecServer, ExecServerClient, Method, ProcessRuntime, silentLogger } from '../src/index.js';
import { answerInitialize } from '../src/server/early-initialize.js';

function inProcessServer() {
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const server = new ExecServer({ input: toServer, output: fromServer, logger: silentLogger }).listen();
  return { server, toServer, fromServer };
}

describe('ExecServer over streams with ExecServerClient.connect', () => {
  it('serves processes and files, and drains to exit 0 when the client closes', async () => {
    const { server, toServer, fromServer } = inProcessServer();
    const client = await ExecServerClient.connect(fromServer, toServer, { clientName: 'in-process' });
    expect(client.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const result = await client.run(['sh', '-c', 'echo in-process'], { env: { PATH: '/usr/bin:/bin' } });
    expect(result.stdout.toString()).toBe('in-process\n');
    expect((await client.getMetadata('/')).isDirectory).toBe(true);
    await expect(client.request(Method.FsReadFile, { path: 'relative' })).rejects.toMatchObject({
      code: ErrorCode.InvalidParams,
    });
    const sleeper = await client.start({ argv: ['sleep', '30'], env: { PATH: '/usr/bin:/bin' } });
    await client.close();
    expect(await server.done).toBe(0);
    expect(sleeper.done).toBe(true);
  });

  it('hands a stream reader output lines it may keep (line buffers are reused only on sockets)', async () => {
    const data = Buffer.from(randomBytes(1024 * 1024).toString('hex'));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'in-process-flood-'));
    fs.writeFileSync(path.join(dir, 'data'), data);
    const { server, toServer, fromServer } = inProcessServer();
    const kept: Buffer[] = [];
    let text = '';
    const closed = new Promise<void>((resolve) =>
      fromServer.on('data', (chunk: Buffer) => {
        kept.push(chunk);
        text = (text + chunk.toString('latin1')).slice(-256);
        if (text.includes('"method":"process/closed"')) resolve();
      }),
    );
    const send = (message: object) => toServer.write(`${JSON.stringify(message)}\n`);
    send({ id: 1, method: 'initialize', params: { clientName: 'x' } });
    send({ method: 'initialized', params: {} });
    const argv = ['cat', path.join(dir, 'data')];
    send({ id: 2, method: 'process/start', params: { processId: 'p', argv, cwd: '/tmp', env: { PATH: '/usr/bin:/bin' }, tty: false } });
    await closed;
    toServer.end();
    expect(await server.done).toBe(0);
    fs.rmSync(dir, { recursive: true, force: true });
    const lines = Buffer.concat(kept)
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    const output = lines.filter((message) => message.method === 'process/output').map((message) => message.params.chunk);
    const streamed = Buffer.concat(output.map((chunk: string) => Buffer.from(chunk, 'base64')));
    expect(streamed.length).toBe(data.length);
    expect(streamed.equals(data)).toBe(true);
  });

  it('answers a client that only pipelines raw lines', async () => {
    const { server, toServer, fromServer } = inProcessServer();
    const lines: string[] = [];
    fromServer.setEncoding('utf8').on('data', (text: string) => lines.push(...text.split('\n').filter(Boolean)));
    toServer.end('{"id":1,"method":"initialize","params":{"clientName":"x"}}\n{"id":2,"method":"nope"}\n');
    expect(await server.done).toBe(0);
    expect(lines.map((line) => JSON.parse(line).id)).toEqual([1, 2]);
  });

  it('after an initialize answered before it existed: afterFirstAnswer once its own first answer is out, never once it finished', async () => {
    const early = () =>
      answerInitialize(Buffer.from('{"id":1,"method":"initialize","params":{"clientName":"early"}}'), () => ({
        available: false,
        type: 'linuxSeccomp',
      }))!.answered;
    let readied = 0;
    const serve = () => {
      const toServer = new PassThrough();
      const fromServer = new PassThrough();
      const server = new ExecServer({
        input: toServer,
        output: fromServer,
        logger: silentLogger,
        answeredInitialize: early(),
        afterFirstAnswer: () => readied++,
      }).listen();
      return { server, toServer, fromServer };
    };
    const answering = serve();
    const lines: string[] = [];
    answering.fromServer.setEncoding('utf8').on('data', (text: string) => lines.push(...text.split('\n').filter(Boolean)));
    answering.toServer.write('{"method":"initialized","params":{}}\n{"id":2,"method":"fs/getMetadata","params":{"path":"/tmp"}}\n');
    await vi.waitFor(() => expect(readied).toBe(1), { timeout: 15_000 });
    answering.toServer.end();
    expect(await answering.server.done).toBe(0);
    expect(lines.map((line) => JSON.parse(line).id)).toEqual([2]);
    // Input ended at once: the server finishes before its fallback timer (25 ms), which must not fire after.
    readied = 0;
    const ending = serve();
    ending.toServer.end();
    expect(await ending.server.done).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(readied).toBe(0);
  });

  it("gives a forgotten process's retained output back to the runtime's pool", async () => {
    const runtime = new ProcessRuntime();
    const taken = vi.spyOn(runtime.outputSlabs, 'take');
    const given = vi.spyOn(runtime.outputSlabs, 'give');
    const toServer = new PassThrough();
    const fromServer = new PassThrough();
    const server = new ExecServer({ input: toServer, output: fromServer, logger: silentLogger, runtime, retentionMs: 0 }).listen();
    try {
      const client = await ExecServerClient.connect(fromServer, toServer, { clientName: 'forget' });
      const bytes = 4 * 1024 * 1024;
      const result = await client.run(['head', '-c', String(bytes), '/dev/zero'], { env: { PATH: '/usr/bin:/bin' } });
      expect(result.stdout.length).toBe(bytes);
      // Packed into 64 KiB slabs: at least one per 64 KiB, and the last 1 MiB's go back only when the process is forgotten.
      expect(taken.mock.calls.length).toBeGreaterThanOrEqual(bytes / (64 * 1024));
      await vi.waitFor(() => expect(given.mock.calls.length).toBe(taken.mock.calls.length), { timeout: 15_000 });
      await client.close();
      expect(await server.done).toBe(0);
    } finally {
      runtime.stop();
    }
  });
});
