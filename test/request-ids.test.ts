/**
 * Request ids as the reference (serde_json) takes them: any i64 integer,
 * echoed exactly (beyond 2^53 too); `1.0`, `1e3` and integers outside i64
 * refused; an id repeated while its first request is unanswered goes on in
 * its turn and gets its own answer; 7 and "7" are two ids. And a `\u` escape
 * of a lone surrogate is refused, as the reference refuses it, instead of
 * turning into U+FFFD in a path.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerProcess } from './support/server-process.js';

let server: ServerProcess;
let dir: string;
beforeAll(async () => {
  server = await ServerProcess.started();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'request-ids-'));
});
afterAll(async () => {
  await server.dispose();
  fs.rmSync(dir, { recursive: true, force: true });
});

const metadata = (idText: string, target = '/tmp') => `{"id":${idText},"method":"fs/getMetadata","params":{"path":"${target}"}}`;

/** The raw line of the next answer after those seen so far (ServerProcess's parsed ids would be rounded). */
async function nextRawAnswer(send: string): Promise<string> {
  const seen = server.rawLines.length;
  server.sendLine(send);
  await server.waitFor(() => server.rawLines.slice(seen).some((line) => !line.startsWith('{"method"')));
  return server.rawLines.slice(seen).find((line) => !line.startsWith('{"method"'))!;
}

describe('request ids', () => {
  it.each([
    ['9007199254740993', metadata('9007199254740993')],
    ['9223372036854775807', metadata('9223372036854775807')],
    ['-9223372036854775808', metadata('-9223372036854775808')],
    ['9007199254740995', '{ "method" : "fs/getMetadata", "params":{"path":"/"}, "id" : 9007199254740995 }'],
  ])('echoes %s exactly', async (idText, line) => {
    expect(await nextRawAnswer(line)).toMatch(new RegExp(`^\\{"id":${idText},"result":\\{"isDirectory":true`));
  });

  it.each(['1.0', '1e3', '-9223372036854775809', '9223372036854775808', '18446744073709551615'])(
    'refuses %s as an id with -32600, id null, and serves on',
    async (idText) => {
      expect(JSON.parse(await nextRawAnswer(metadata(idText)))).toEqual({
        id: null,
        error: { code: -32600, message: 'Invalid Request: "id" must be a string or a 64-bit integer' },
      });
      expect((await server.call('fs/getMetadata', { path: '/' })).result.isDirectory).toBe(true);
    },
  );

  it('starts a request whose id is still unanswered in its turn, and answers each with its own id', async () => {
    const start = (id: string, processId: string) =>
      `{"id":${id},"method":"process/start","params":{"processId":"${processId}","argv":["sleep","30"],"cwd":"/tmp","env":{},"tty":false}}`;
    server.sendLine(start('"dup-start"', 'dup-poller'));
    await server.waitFor((m) => m.id === 'dup-start');
    // A long-poll holds id 71; a metadata request, a start and a read with that id (and "71") come after it.
    server.sendLine('{"id":71,"method":"process/read","params":{"processId":"dup-poller","afterSeq":0,"waitMs":20000}}');
    server.sendLine(metadata('71'));
    server.sendLine(start('71', 'dup-started'));
    server.sendLine('{"id":"71","method":"process/read","params":{"processId":"dup-started"}}');
    server.sendLine('{"id":72,"method":"process/terminate","params":{"processId":"dup-started"}}');
    const terminated = await server.waitFor((m) => m.id === 72);
    expect(terminated).toEqual({ id: 72, result: { running: true } });
    const answers = server.messages.filter((m) => m.id === 71 || m.id === '71');
    expect(answers).toEqual([
      { id: 71, result: expect.objectContaining({ isDirectory: true }) },
      { id: 71, result: { processId: 'dup-started' } },
      { id: '71', result: expect.objectContaining({ exited: false, closed: false }) },
    ]);
    await server.request('process/terminate', { processId: 'dup-poller' });
    const poll = await server.waitFor((m) => m.id === 71 && 'chunks' in (m.result ?? {}));
    expect(poll.result.exited).toBe(true);
  });

  it('echoes a repeated id with $ patterns in it exactly (a replacement string would read them)', async () => {
    await server.start('dollar-poller', ['sleep', '30']);
    const ids = ['a$$b', "x$'", 'y$&', '$`z'];
    for (const id of ids) {
      // The long-poll holds the id; the request after it goes on under an alias.
      server.send({ id, method: 'process/read', params: { processId: 'dollar-poller', afterSeq: 0, waitMs: 20_000 } });
      server.send({ id, method: 'fs/getMetadata', params: { path: '/' } });
    }
    const answered = () => server.messages.filter((m) => ids.includes(m.id) && 'result' in m);
    await server.waitFor(() => answered().length === ids.length);
    expect(answered().map((m) => m.id)).toEqual(ids);
    await server.request('process/terminate', { processId: 'dollar-poller' });
    await server.waitFor(() => answered().length === 2 * ids.length);
    expect(server.messages.filter((m) => typeof m.id === 'string' && m.id.startsWith('\u0000'))).toEqual([]);
  });

  it('takes a line nested 20,000 deep with a \\u escape in it without a crash', async () => {
    const depth = 20_000;
    const line = `{"id":"deep-u","method":"fs/getMetadata","params":${'['.repeat(depth)}"\\u0041"${']'.repeat(depth)}}`;
    expect(JSON.parse(await nextRawAnswer(line))).toMatchObject({ id: 'deep-u', error: { code: -32602 } });
    expect((await server.call('fs/getMetadata', { path: '/' })).result.isDirectory).toBe(true);
  });

  it('refuses a \\u escape of a lone surrogate with -32700, and takes a pair and an escaped backslash', async () => {
    const file = path.join(dir, 'a\ud83d\ude00');
    fs.writeFileSync(file, '');
    for (const lone of ['\\ud800', '\\udc00', '\\ud800\\ud800']) {
      expect(JSON.parse(await nextRawAnswer(metadata('81', `${dir}/a${lone}`)))).toEqual({
        id: null,
        error: { code: -32700, message: 'Parse error: lone surrogate in a \\u escape' },
      });
    }
    expect(JSON.parse(await nextRawAnswer(metadata('82', `${dir}/a\\ud83d\\ude00`)))).toMatchObject({ id: 82, result: { isFile: true } });
    expect(JSON.parse(await nextRawAnswer(metadata('83', `${dir}/a\\\\ud800`)))).toMatchObject({ id: 83, error: { code: -32004 } });
  });

  it('checks a line of several MiB (the large-line path) the same way', async () => {
    const data = Buffer.alloc(3 * 1024 * 1024, 7).toString('base64');
    const write = (idText: string, target: string) =>
      `{"id":${idText},"method":"fs/writeFile","params":{"path":"${target}","dataBase64":"${data}"}}`;
    expect(await nextRawAnswer(write('9007199254740993', `${dir}/big`))).toBe('{"id":9007199254740993,"result":{}}');
    expect(fs.statSync(path.join(dir, 'big')).size).toBe(3 * 1024 * 1024);
    expect(JSON.parse(await nextRawAnswer(write('84', `${dir}/lone\\ud800`)))).toEqual({
      id: null,
      error: { code: -32700, message: 'Parse error: lone surrogate in a \\u escape' },
    });
    expect(fs.readdirSync(dir).filter((name) => name.startsWith('lone'))).toEqual([]);
  });
});
