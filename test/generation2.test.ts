/**
 * Protocol generation 2 (Codex 0.169, PROTOCOL-V2.md) beside generation 1:
 * the server follows the generation the client shows (see
 * `src/server/client-generation.ts`), through the real CLI.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { b64, BASE_ENV, ServerPool, type ServerProcess } from './support/server-process.js';

let tmp: string;
const servers = new ServerPool();
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-gen2-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
afterEach(() => servers.disposeAll());
const started = () => servers.started();

/** A server whose client has shown generation 2, as Codex 0.169 does right after initialize. */
async function generation2(): Promise<ServerProcess> {
  const server = await started();
  await server.request('environment/info', null);
  return server;
}

const uri = (native: string) => pathToFileURL(native).href;

describe('paths as file:// URIs', () => {
  it('runs in a cwd given as a URI, percent-encoded and non-ASCII', async () => {
    const server = await generation2();
    const dir = path.join(tmp, 'dir with space ü#');
    fs.mkdirSync(dir);
    await server.start('cwd', ['pwd'], { cwd: uri(dir) });
    await server.waitClosed('cwd');
    expect(server.output('cwd').toString()).toBe(`${dir}\n`);
  });

  it('reads, writes and stats through URIs, and answers canonicalize in the form asked', async () => {
    const server = await started();
    const file = path.join(tmp, 'ü file.txt');
    await server.request('fs/writeFile', { path: uri(file), dataBase64: b64('via uri') });
    expect(fs.readFileSync(file, 'utf8')).toBe('via uri');
    expect((await server.request('fs/readFile', { path: uri(file) })).dataBase64).toBe(b64('via uri'));
    fs.symlinkSync(file, path.join(tmp, 'link'));
    expect(await server.request('fs/canonicalize', { path: uri(path.join(tmp, 'link')) })).toEqual({ path: uri(file) });
    expect(await server.request('fs/canonicalize', { path: path.join(tmp, 'link') })).toEqual({ path: file });
    await server.request('fs/copy', { sourcePath: uri(file), destinationPath: path.join(tmp, 'copy'), recursive: false });
    expect(fs.readFileSync(path.join(tmp, 'copy'), 'utf8')).toBe('via uri');
    // As Codex 0.169's realpath (musl's): PATH_MAX bytes or more is too long before any lookup; one less is looked up.
    const deep = `/tmp/${'a/'.repeat(2045)}x`;
    expect(await server.error('fs/canonicalize', { path: uri(deep.slice(0, 4096)) })).toEqual({
      code: -32603,
      message: 'Filename too long (os error 36)',
    });
    expect((await server.error('fs/canonicalize', { path: uri(deep.slice(0, 4095)) })).code).toBe(-32004);
  });

  it('refuses a URI with a host as the reference does, and a broken one naming the URI error', async () => {
    const server = await started();
    expect(await server.error('fs/getMetadata', { path: 'file://relative/x' })).toEqual({
      code: -32600,
      message: "'file://relative/x' is invalid on 'linux'",
    });
    expect(await server.error('process/start', { processId: 'h', argv: ['true'], cwd: 'file://host/tmp', env: {}, tty: false })).toEqual({
      code: -32602,
      message: "cwd URI `file://host/tmp` is not valid on this exec-server host: 'file://host/tmp' is invalid on 'linux'",
    });
    expect((await server.error('fs/getMetadata', { path: 'file:///tmp/%00' })).code).toBe(-32602);
  });

  it('quotes the URI as parsed, a drive letter upper-case, and takes `c|` as a name, not a drive (as Codex 0.169)', async () => {
    const server = await started();
    const start = (processId: string, cwd: string) =>
      server.error('process/start', { processId, argv: ['true'], cwd, env: {}, tty: false });
    expect(await server.error('fs/getMetadata', { path: 'file:///c:/x' })).toEqual({
      code: -32600,
      message: "'file:///C:/x' is invalid on 'linux'",
    });
    expect(await start('drive', 'file:///c:/x')).toEqual({
      code: -32602,
      message: "cwd URI `file:///C:/x` is not valid on this exec-server host: 'file:///C:/x' is invalid on 'linux'",
    });
    expect((await start('parsed', 'file://HOST/tmp/../x')).message).toMatch(/^cwd URI `file:\/\/host\/x` is not valid/);
    expect(await server.error('fs/getMetadata', { path: 'file:///c|/x' })).toEqual({
      code: -32004,
      message: 'No such file or directory (os error 2)',
    });
  });
});

describe('environment/info and environment/status', () => {
  it('answers generation 2 with URIs and honest capabilities, keeping our fields', async () => {
    const server = await started();
    const info = await server.request('environment/info', null);
    expect(info.cwd).toBe(uri(process.cwd()));
    expect(info.userHomeDir).toBe(uri(os.homedir()));
    expect(info.tempDir).toBe(uri(os.tmpdir()));
    expect(info.platformOs).toBe('linux');
    expect(info.executorVersion).toMatch(/^\d+\.\d+\.\d+/);
    // True only for what this server implements: the generation-2 client decides from them what to send.
    const claimed = Object.entries(info.capabilities)
      .filter(([, flag]) => flag === true)
      .map(([name]) => name);
    expect(claimed.sort()).toEqual(['fileWriteStreaming', 'fsWatchMissing', 'httpHeaderEnvVars', 'sandboxedFileStreaming']);
    expect(info.shell.path).toMatch(/^\//);
    expect(info.pid).toBe(server.child.pid);
    expect(await server.request('environment/status', null)).toEqual({ status: 'ready' });
  });

  it('adds size to fs/getMetadata in generation 2 only (the target size for a symlink)', async () => {
    const file = path.join(tmp, 'sized');
    fs.writeFileSync(file, 'x'.repeat(1234));
    fs.symlinkSync(file, path.join(tmp, 'sized-link'));
    const first = await started();
    expect((await first.request('fs/getMetadata', { path: file })).size).toBeUndefined();
    const second = await generation2();
    expect(await second.request('fs/getMetadata', { path: uri(path.join(tmp, 'sized-link')) })).toMatchObject({
      isSymlink: true,
      isFile: true,
      size: 1234,
    });
  });
});

describe('processes in generation 2', () => {
  it('answers start with sandboxType, exit with sandboxDenied, and counts exit and close in nextSeq', async () => {
    const server = await generation2();
    expect(await server.start('p', ['sh', '-c', 'echo hi'])).toEqual({ processId: 'p', sandboxType: 'none' });
    await server.waitClosed('p');
    expect(server.notifications('p').find((m) => m.method === 'process/exited')!.params).toEqual({
      processId: 'p',
      seq: 2,
      exitCode: 0,
      sandboxDenied: false,
    });
    expect(await server.request('process/read', { processId: 'p', afterSeq: 0 })).toEqual({
      chunks: [{ seq: 1, stream: 'stdout', chunk: b64('hi\n') }],
      nextSeq: 4,
      exited: true,
      exitCode: 0,
      closed: true,
      failure: null,
      sandboxDenied: false,
    });
  });

  it('takes any policy sent, disabled or external too, as a sandbox for sandboxType and sandboxDenied (as Codex 0.169)', async () => {
    const server = await generation2();
    const permissions = [{ type: 'disabled' }, { type: 'external', network: 'restricted' }];
    for (const [i, sandbox] of permissions
      .map((p) => ({ permissions: p, cwd: 'file:///tmp', windowsSandboxLevel: 'disabled' }))
      .entries()) {
      const denied = ['sh', '-c', 'echo "cat: /x: Permission denied" >&2; exit 1'];
      expect(await server.start(`d${i}`, denied, { sandbox })).toEqual({ processId: `d${i}`, sandboxType: 'linuxSeccomp' });
      await server.waitClosed(`d${i}`);
      expect(server.notifications(`d${i}`).find((m) => m.method === 'process/exited')!.params).toMatchObject({ sandboxDenied: true });
    }
    await server.start('plain', ['sh', '-c', 'echo "cat: /x: Permission denied" >&2; exit 1']);
    await server.waitClosed('plain');
    expect(server.notifications('plain').find((m) => m.method === 'process/exited')!.params).toMatchObject({ sandboxDenied: false });
  });

  it('reports 137 after terminate and 130 after interrupt on pipes, 1 on a PTY (as Codex 0.169)', async () => {
    const server = await generation2();
    for (const tty of [false, true]) {
      await server.start(`t${tty}`, ['sleep', '30'], { tty });
      await server.request('process/terminate', { processId: `t${tty}` });
      await server.start(`i${tty}`, ['sleep', '30'], { tty });
      await server.request('process/signal', { processId: `i${tty}`, signal: 'interrupt' });
      for (const [id, code] of [
        [`t${tty}`, tty ? 1 : 137],
        [`i${tty}`, tty ? 1 : 130],
      ] as const) {
        await server.waitClosed(id);
        expect(server.notifications(id).find((m) => m.method === 'process/exited')!.params.exitCode).toBe(code);
      }
    }
  });

  it("answers a PTY program's cursor position, status and size queries and takes them out of its output; generation 1 passes them on", async () => {
    // The answers come back on the terminal's input: the program reads them (as a TUI asking where its cursor is).
    // Echo goes off first, as a TUI's raw mode does: an answer that arrives before `read -s` turns it off is echoed.
    const script =
      'stty -echo; printf "A\\033[6nB"; IFS= read -r -s -t 2 -d R x; printf "\\033[18t"; IFS= read -r -s -t 2 -d t y; printf "[%q|%q]" "$x" "$y"';
    const askAndShow = ['bash', '-c', script];
    const answered = await (await generation2()).runToClose('queries', askAndShow, { tty: true, size: { rows: 30, cols: 100 } });
    expect(answered.output).toBe("AB[$'\\E[1;1'|$'\\E[8;30;100']");
    const passedOn = await (await started()).runToClose('queries1', ['printf', 'A\\033[6nB'], { tty: true });
    expect(passedOn.output).toBe('A\x1b[6nB');
  });

  it('applies a repeated writeId once, answers it accepted, and refuses an empty one', async () => {
    const server = await generation2();
    await server.start('w', ['cat'], { pipeStdin: true });
    for (const [writeId, text] of [
      ['1', 'a\n'],
      ['1', 'a\n'],
      ['2', 'b\n'],
    ]) {
      expect(await server.request('process/write', { processId: 'w', chunk: b64(text!), writeId })).toEqual({ status: 'accepted' });
    }
    expect(await server.error('process/write', { processId: 'w', chunk: '', writeId: '' })).toEqual({
      code: -32602,
      message: 'writeId must not be empty',
    });
    await server.request('process/write', { processId: 'w', chunk: '', writeId: '3', closeStdin: true });
    await server.waitClosed('w');
    expect(server.output('w').toString()).toBe('a\nb\n');
  });
});

describe('generation 1 stays as it was', () => {
  it('keeps -1 after terminate, plain start results and exited without sandboxDenied', async () => {
    const server = await started();
    expect(await server.start('g1', ['sleep', '30'], { env: BASE_ENV })).toEqual({ processId: 'g1' });
    await server.request('process/terminate', { processId: 'g1' });
    await server.waitClosed('g1');
    expect(server.notifications('g1').find((m) => m.method === 'process/exited')!.params).toEqual({
      processId: 'g1',
      seq: 1,
      exitCode: -1,
    });
    const info = await server.request('environment/info');
    expect(info.cwd).toBe(process.cwd());
  });

  it('stays generation 1 for a plain-path client that sends a sandbox, as the 0.134 reference answers it', async () => {
    const server = await started();
    expect(await server.start('s1', ['true'], { env: BASE_ENV, sandbox: null })).toEqual({ processId: 's1' });
    await server.waitClosed('s1');
    expect(server.notifications('s1').find((m) => m.method === 'process/exited')!.params).toEqual({ processId: 's1', seq: 1, exitCode: 0 });
  });
});

describe('a method only generation 2 has', () => {
  it('words its bad params as generation 2, and leaves the connection in generation 1 (our client offers it there)', async () => {
    const server = await started();
    expect(await server.error('fs/watchMissing', { watchId: -1, missing: [] })).toEqual({
      code: -32602,
      message: 'watchId: invalid number',
    });
    expect(await server.error('fs/watchMissing', { watchId: 1, missing: ['relative'] })).toEqual({
      code: -32602,
      message: 'invalid URI: relative URL without a base',
    });
    expect(await server.start('after', ['true'], { env: BASE_ENV })).toEqual({ processId: 'after' });
  });
});
