/** http/request with streamed bodies, and requests still waiting at the end of input. */
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecServer, silentLogger } from '../src/index.js';
import { ServerProcess } from './support/server-process.js';
import { req, startTestOrigin, type TestOrigin, text } from './support/test-origin.js';

let server: ServerProcess;
let origin: TestOrigin;
let base: string;

beforeAll(async () => {
  origin = await startTestOrigin();
  base = origin.base;
  server = await ServerProcess.started();
});
afterAll(async () => {
  await server.dispose();
  await origin.close();
});

describe('http/request streamed', () => {
  const deltas = (requestId: string) =>
    server.messages.filter((m) => m.method === 'http/request/bodyDelta' && m.params.requestId === requestId).map((m) => m.params);
  const done = (requestId: string) =>
    server.waitFor((m) => m.method === 'http/request/bodyDelta' && m.params.requestId === requestId && m.params.done);

  it('answers after the headers, then sends numbered deltas and one terminal delta', async () => {
    const response = await server.call('http/request', req({ url: `${base}/chunked`, requestId: 's1', streamResponse: true }));
    expect(response.result).toMatchObject({ status: 200, bodyBase64: '' });
    await done('s1');
    const list = deltas('s1');
    expect(list.map((d) => d.seq)).toEqual(list.map((_, i) => i + 1));
    expect(list.map((d) => text(d.deltaBase64)).join('')).toBe('part1;part2;part3;');
    expect(list.at(-1)).toEqual({ requestId: 's1', seq: list.length, deltaBase64: '', done: true, error: null });
    const responseIndex = server.messages.indexOf(response);
    const firstDelta = server.messages.findIndex((m) => m.params?.requestId === 's1');
    expect(responseIndex).toBeLessThan(firstDelta);
  });

  it('ends a body that breaks with a terminal error delta, and an empty body with one terminal delta', async () => {
    await server.request('http/request', req({ url: `${base}/abort`, requestId: 's2', streamResponse: true }));
    expect((await done('s2')).params.error).toBe('error decoding response body');
    await server.request('http/request', req({ url: `${base}/empty`, requestId: 's3', streamResponse: true }));
    await done('s3');
    expect(deltas('s3')).toEqual([{ requestId: 's3', seq: 1, deltaBase64: '', done: true, error: null }]);
  });

  it('rejects a second stream with an active requestId, then allows reuse', async () => {
    await server.request('http/request', req({ url: `${base}/slow-body`, requestId: 's4', streamResponse: true }));
    expect(await server.error('http/request', req({ url: `${base}/hello`, requestId: 's4', streamResponse: true }))).toEqual({
      code: -32602,
      message: 'http/request streamResponse requestId `s4` is already active',
    });
    // Buffered requests neither check nor reserve ids.
    expect((await server.request('http/request', req({ url: `${base}/hello`, requestId: 's4' }))).status).toBe(200);
    await done('s4');
    expect((await server.request('http/request', req({ url: `${base}/hello`, requestId: 's4', streamResponse: true }))).status).toBe(200);
  });

  it('aborts a stream in progress at end of input with "exec-server input closed"', async () => {
    const local = await ServerProcess.started();
    try {
      await local.request('http/request', req({ url: `${base}/slow-body`, requestId: 'eof', streamResponse: true }));
      const { code } = await local.close();
      expect(code).toBe(0);
      const terminal = local.messages.filter((m) => m.method === 'http/request/bodyDelta').at(-1)!;
      expect(terminal.params).toMatchObject({ done: true, error: 'exec-server input closed' });
    } finally {
      await local.dispose();
    }
  });
});

describe('http/request at the end of input', () => {
  it('answers requests without a timeout still waiting a while after EOF with an error, and exits; one with a timeout keeps it', async () => {
    const toServer = new PassThrough();
    const fromServer = new PassThrough();
    const exec = new ExecServer({ input: toServer, output: fromServer, logger: silentLogger, httpInputEndGraceMs: 300 }).listen();
    const answers = new Map<number, { result?: { status: number; bodyBase64: string }; error?: { code: number; message: string } }>();
    let pending = '';
    fromServer.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n')) {
        const message = JSON.parse(pending.slice(0, end));
        pending = pending.slice(end + 1);
        if (typeof message.id === 'number') answers.set(message.id, message);
      }
    });
    const send = (message: object) => toServer.write(`${JSON.stringify(message)}\n`);
    send({ id: 1, method: 'initialize', params: { clientName: 'eof-http' } });
    send({ method: 'initialized', params: {} });
    send({ id: 2, method: 'http/request', params: req({ url: `${base}/hang` }) });
    send({ id: 3, method: 'http/request', params: req({ url: `${base}/endless`, requestId: 'e' }) });
    send({ id: 4, method: 'http/request', params: req({ url: `${base}/late`, requestId: 'l', timeoutMs: 5000 }) });
    toServer.end();
    expect(await exec.done).toBe(0);
    for (const [id, path] of [
      [2, '/hang'],
      [3, '/endless'],
    ] as const)
      expect(answers.get(id)?.error).toEqual({
        code: -32603,
        message: `http/request failed: no answer from ${base}${path} within 300 ms of the end of input (give the request a timeoutMs to wait longer)`,
      });
    expect(answers.get(4)?.result).toMatchObject({ status: 200, bodyBase64: Buffer.from('late').toString('base64') });
  });
});
