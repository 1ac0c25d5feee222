/**
 * Generation 2 beside Codex 0.169.0's own exec-server (when installed): the
 * same requests to both, the answers that should agree compared after
 * normalization. Each check also asserts our answer on its own, so the file
 * tests something without the reference too.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Contestant, contestants, hasReference, normalize } from './support/differential.js';
import { closeLoopback, listenLoopback } from './support/loopback.js';
import { b64, BASE_ENV } from './support/server-process.js';

let root: string;
let servers: Contestant[];
let web: http.Server;
let base: string;
const uri = (relative = '') => pathToFileURL(path.join(root, relative)).href;

beforeAll(async () => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'differential-')));
  fs.writeFileSync(path.join(root, 'twelve.txt'), 'hello world\n');
  web = http.createServer((request, response) => {
    // No Date header: the two servers' requests may fall in different seconds.
    response.sendDate = false;
    if (request.url === '/redirect') response.writeHead(302, { location: '/hello' }).end();
    else response.end('hello');
  });
  base = await listenLoopback(web);
  // The generation-2 client shows itself at once (Codex sends environment/info with null params).
  servers = await contestants({ ...process.env, DIFF_SET: 'set' });
  for (const { server } of servers) await server.request('environment/info', null);
});

afterAll(async () => {
  await Promise.all(servers.map((contestant) => contestant.dispose()));
  await closeLoopback(web);
  fs.rmSync(root, { recursive: true, force: true });
});

/** Every contestant's normalized answer (result or error) to one request; `ignored` members are not compared. */
async function both(method: string, params: unknown, ignored: string[] = []): Promise<unknown> {
  const answers: Record<string, unknown> = {};
  for (const { name, server } of servers) {
    const response = await server.call(method, params);
    const answer = normalize(response.error ?? response.result, root) as Record<string, unknown>;
    answers[name] = Object.fromEntries(Object.entries(answer).filter(([key]) => !ignored.includes(key)));
  }
  if (hasReference) expect(answers.ours).toEqual(answers.reference);
  return answers.ours;
}

/** Runs a process on every contestant; its exit code (and sandboxDenied) once closed. */
async function exitOf(processId: string, argv: string[], act?: (server: Contestant['server']) => Promise<void>): Promise<unknown> {
  const answers: Record<string, unknown> = {};
  for (const { name, server } of servers) {
    const started = await server.request('process/start', { processId, argv, cwd: uri(), env: BASE_ENV, tty: false, pipeStdin: true });
    expect(started).toEqual({ processId, sandboxType: 'none' });
    await act?.(server);
    await server.waitClosed(processId);
    const exited = (await server.waitExited(processId)).params;
    answers[name] = { exitCode: exited.exitCode, sandboxDenied: exited.sandboxDenied, output: server.output(processId).toString() };
  }
  if (hasReference) expect(answers.ours).toEqual(answers.reference);
  return answers.ours;
}

describe('generation 2, side by side with the reference', () => {
  it('answers environment/status and metadata with size', async () => {
    expect(await both('environment/status', null)).toEqual({ status: 'ready' });
    // Without createdAtMs: the reference's musl build reports 0, we report the birth time where the filesystem has one.
    const { createdAtMs: _created, ...metadata } = (await both('fs/getMetadata', { path: uri('twelve.txt') }, ['createdAtMs'])) as Record<
      string,
      unknown
    >;
    expect(metadata).toMatchObject({ isFile: true, size: 12 });
  });

  it('reports the same capability names', async () => {
    const names: Record<string, string[]> = {};
    for (const { name, server } of servers) names[name] = Object.keys((await server.request('environment/info', null)).capabilities).sort();
    if (hasReference) expect(names.ours).toEqual(names.reference);
    expect(names.ours).toContain('fsWatchMissing');
  });

  it('exits 128+signal after terminate and interrupt, and normally otherwise', async () => {
    expect(await exitOf('normal', ['sh', '-c', 'echo out; exit 3'])).toEqual({ exitCode: 3, sandboxDenied: false, output: 'out\n' });
    expect(
      await exitOf('killed', ['sleep', '30'], async (server) => {
        await server.request('process/terminate', { processId: 'killed' });
      }),
    ).toMatchObject({ exitCode: 137 });
    expect(
      await exitOf('interrupted', ['sleep', '30'], async (server) => {
        await server.request('process/signal', { processId: 'interrupted', signal: 'interrupt' });
      }),
    ).toMatchObject({ exitCode: 130 });
  });

  it('applies a repeated writeId once and refuses an empty one', async () => {
    const result = await exitOf('cat', ['cat'], async (server) => {
      for (const [writeId, text] of [
        ['1', 'a\n'],
        ['1', 'a\n'],
        ['2', 'b\n'],
      ]) {
        expect(await server.request('process/write', { processId: 'cat', chunk: b64(text!), writeId })).toEqual({ status: 'accepted' });
      }
      expect((await server.call('process/write', { processId: 'cat', chunk: '', writeId: '' })).error).toEqual({
        code: -32602,
        message: 'writeId must not be empty',
      });
      // closeStdin is our extension (the reference ignores it): end cat once its output is in.
      await server.waitFor(() => server.output('cat').toString() === 'a\nb\n');
      await server.request('process/terminate', { processId: 'cat' });
    });
    expect(result).toEqual({ exitCode: 137, sandboxDenied: false, output: 'a\nb\n' });
    expect(await both('process/signal', { processId: 'nope', signal: 'interrupt' })).toEqual({});
    // Generation 2 requires a writeId (after the chunk's check below).
    expect(await both('process/write', { processId: 'nope', chunk: b64('x') })).toEqual({
      code: -32602,
      message: 'missing field `writeId`',
    });
    // The chunk is checked before the writeId.
    expect(await both('process/write', { processId: 'nope', chunk: '!!', writeId: '' })).toEqual({
      code: -32602,
      message: 'Invalid symbol 33, offset 0.',
    });
  });

  it('stops at a redirect when asked, and fills headers from the server environment', async () => {
    const stopped = (await both('http/request', { method: 'GET', url: `${base}/redirect`, requestId: 'r1', redirectPolicy: 'stop' })) as {
      status: number;
      headers: Array<{ name: string; value: string }>;
    };
    expect(stopped.status).toBe(302);
    expect(stopped.headers).toContainEqual({ name: 'location', value: '/hello' });
    const header = (valueEnvVar: string) => ({
      method: 'GET',
      url: `${base}/hello`,
      requestId: 'r2',
      headers: [{ name: 'x-test', value: 'v-', valueEnvVar }],
    });
    expect(await both('http/request', header('DIFF_SET'))).toMatchObject({ status: 200, bodyBase64: b64('hello') });
    expect(await both('http/request', header('DIFF_UNSET'))).toEqual({
      code: -32602,
      message: 'http/request header x-test requires executor environment variable DIFF_UNSET',
    });
    // Node's environment reads a name only up to a NUL: DIFF_SET's value must not be sent.
    expect(await both('http/request', header('DIFF_SET\u0000junk'))).toEqual({
      code: -32602,
      message: 'http/request header x-test requires executor environment variable DIFF_SET\u0000junk',
    });
  });

  it('words OS errors as musl does and answers EINVAL −32600, as the reference (and ends a mkdir -p that cannot be made)', async () => {
    expect(await both('fs/getMetadata', { path: uri('n'.repeat(300)) })).toEqual({
      code: -32603,
      message: 'Filename too long (os error 36)',
    });
    expect(await both('fs/writeFile', { path: 'file:///proc/self/oom_score_adj', dataBase64: b64('abc') })).toEqual({
      code: -32600,
      message: 'Invalid argument (os error 22)',
    });
    // Node's own recursive mkdir retries this without end.
    expect(await both('fs/createDirectory', { path: 'file:///proc/self/x', recursive: true })).toEqual({
      code: -32004,
      message: 'No such file or directory (os error 2)',
    });
    expect(await both('fs/createDirectory', { path: uri('twelve.txt/a'), recursive: true })).toEqual({
      code: -32603,
      message: 'Not a directory (os error 20)',
    });
    expect(await both('fs/createDirectory', { path: uri('twelve.txt'), recursive: true })).toEqual({
      code: -32603,
      message: 'File exists (os error 17)',
    });
    expect(await both('fs/createDirectory', { path: uri('made/a/b'), recursive: true })).toEqual({});
    expect(fs.statSync(path.join(root, 'made/a/b')).isDirectory()).toBe(true);
  });

  it('refuses what is not a regular file, a FIFO without waiting for a writer', async () => {
    execFileSync('mkfifo', [path.join(root, 'fifo')]);
    for (const target of [uri('fifo'), 'file:///dev/null']) {
      const where = target === uri('fifo') ? 'R/fifo' : '/dev/null';
      const notAFile = { code: -32600, message: `path \`${where}\` is not a file` };
      expect(await both('fs/readFile', { path: target })).toEqual(notAFile);
      expect(await both('fs/open', { handleId: 'special', path: target, mode: 'read' })).toEqual(notAFile);
    }
    expect(await both('fs/open', { handleId: 'special', path: uri('fifo'), mode: 'replace' })).toEqual({
      code: -32603,
      message: 'No such device or address (os error 6)',
    });
  });

  it('hands a child its variables sorted by name, without a policy too', async () => {
    const env = { PATH: BASE_ENV.PATH, ZED: 'z', ALPHA: 'a', MID: 'm' };
    const answers: Record<string, unknown> = {};
    for (const { name, server } of servers) {
      await server.request('process/start', { processId: 'envorder', argv: ['env'], cwd: uri(), env, tty: false });
      await server.waitClosed('envorder');
      answers[name] = server.output('envorder').toString();
    }
    expect(answers.ours).toBe(`ALPHA=a\nMID=m\nPATH=${BASE_ENV.PATH}\nZED=z\n`);
    if (hasReference) expect(answers.ours).toEqual(answers.reference);
  });

  it('reports a signal death on a PTY as 1', async () => {
    const codes: Record<string, unknown> = {};
    for (const { name, server } of servers) {
      await server.request('process/start', {
        processId: 'ptykill',
        argv: ['sh', '-c', 'kill -TERM $$'],
        cwd: uri(),
        env: BASE_ENV,
        tty: true,
      });
      // Each awaited: under load, one server's closed was once seen with no exited before it (which one is not known).
      const exited = await server.waitFor((m) => m.method === 'process/exited' && m.params.processId === 'ptykill');
      const closed = await server.waitClosed('ptykill');
      if (name === 'ours') expect(server.messages.indexOf(exited)).toBeLessThan(server.messages.indexOf(closed));
      codes[name] = exited.params.exitCode;
    }
    expect(codes.ours).toBe(1);
    if (hasReference) expect(codes.ours).toEqual(codes.reference);
  });

  it('goes on from the last chunk when a read had maxBytes, and past exit and close otherwise', async () => {
    await exitOf('paged', ['sh', '-c', 'echo a; sleep 0.05; echo b']);
    // Seqs are compared by rule, not as they fell: exit may be numbered before the last output (either server).
    type Read = { chunks: Array<{ seq: number }>; nextSeq: number };
    const rules: Record<string, unknown> = {};
    for (const { name, server } of servers) {
      const all = (await server.request('process/read', { processId: 'paged', afterSeq: 0 })) as Read;
      const paged = (await server.request('process/read', { processId: 'paged', afterSeq: 0, maxBytes: 100 })) as Read;
      rules[name] = {
        pagedFromLastChunk: paged.nextSeq === paged.chunks.at(-1)!.seq + 1,
        allPastExitAndClose: all.nextSeq === all.chunks.length + 3,
      };
    }
    expect(rules.ours).toEqual({ pagedFromLastChunk: true, allPastExitAndClose: true });
    if (hasReference) expect(rules.ours).toEqual(rules.reference);
  });

  it('copies a file that says it is empty but is not (/proc) whole', async () => {
    const copies: Record<string, string> = {};
    for (const { name, server } of servers) {
      const destination = path.join(root, `version-${name}`);
      await server.request('fs/copy', {
        sourcePath: 'file:///proc/version',
        destinationPath: pathToFileURL(destination).href,
        recursive: false,
      });
      copies[name] = fs.readFileSync(destination, 'utf8');
    }
    expect(copies.ours).toBe(fs.readFileSync('/proc/version', 'utf8'));
    if (hasReference) expect(copies.ours).toEqual(copies.reference);
  });

  it('reads past the end at an afterSeq above 2^53', async () => {
    await exitOf('far', ['echo', 'far']);
    const answer = (await both('process/read', { processId: 'far', afterSeq: 2 ** 60 })) as Record<string, unknown>;
    expect(answer).toMatchObject({ chunks: [], exited: true, exitCode: 0, closed: true });
  });

  it('refuses fs/readFile of a directory and a native path where a URI belongs, alike', async () => {
    expect(await both('fs/readFile', { path: uri() })).toEqual({ code: -32600, message: 'path `R` is not a file' });
  });
});
