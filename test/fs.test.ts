import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { managedPolicy, special } from './support/sandbox-policy.js';
import { ServerProcess } from './support/server-process.js';

let server: ServerProcess;
let dir: string;
beforeAll(async () => {
  server = await ServerProcess.started();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-fs-'));
});
afterAll(async () => {
  await server.dispose();
  fs.rmSync(dir, { recursive: true, force: true });
});

const at = (...parts: string[]) => path.join(dir, ...parts);
const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');

describe('paths and errors (§4 common rules)', () => {
  it('requires absolute path strings, and refuses a sandbox policy it cannot enforce', async () => {
    for (const bad of ['', 'relative', '~/x']) {
      expect(await server.error('fs/getMetadata', { path: bad })).toEqual({
        code: -32602,
        message: 'AbsolutePathBuf deserialized without a base path',
      });
    }
    expect(await server.error('fs/getMetadata', { path: 5 })).toEqual({
      code: -32602,
      message: 'path: invalid type: integer `5`, expected path string',
    });
    // A policy that cannot be enforced is refused before anything is touched (enforced ones: sandbox-fs.test.ts).
    expect(await server.error('fs/readFile', { path: '/tmp', sandbox: {} })).toEqual({
      code: -32602,
      message: 'missing field `permissions`',
    });
    const managed = managedPolicy('/tmp', []);
    expect((await server.error('fs/writeFile', { path: '/tmp/never-written', dataBase64: '', sandbox: managed })).message).toBe(
      'sandbox is not supported: a file system without read access to the root; this exec-server cannot enforce it',
    );
    expect(fs.existsSync('/tmp/never-written')).toBe(false);
    for (const unconfined of [null, { permissions: { type: 'disabled' }, windowsSandboxLevel: 'disabled' }]) {
      expect((await server.request('fs/getMetadata', { path: '/tmp', sandbox: unconfined })).isDirectory).toBe(true);
    }
  });

  it('maps OS errors by errno with the strerror text', async () => {
    fs.writeFileSync(at('plain'), 'x');
    expect(await server.error('fs/readFile', { path: at('missing') })).toEqual({
      code: -32004,
      message: 'No such file or directory (os error 2)',
    });
    expect(await server.error('fs/readFile', { path: dir })).toEqual({ code: -32603, message: 'Is a directory (os error 21)' });
    expect(await server.error('fs/readFile', { path: at('plain', 'x') })).toEqual({
      code: -32603,
      message: 'Not a directory (os error 20)',
    });
    fs.symlinkSync('loop', at('loop'));
    expect(await server.error('fs/canonicalize', { path: at('loop') })).toEqual({
      code: -32603,
      message: 'Symbolic link loop (os error 40)',
    });
  });
});

describe('read and write', () => {
  it('round-trips bytes, follows symlinks, reads /proc files', async () => {
    const bytes = Buffer.from([0, 1, 2, 255, 10, 13]);
    expect(await server.request('fs/writeFile', { path: at('bin'), dataBase64: b64(bytes) })).toEqual({});
    expect(Buffer.from((await server.request('fs/readFile', { path: at('bin') })).dataBase64, 'base64')).toEqual(bytes);
    fs.symlinkSync(at('bin'), at('bin-link'));
    expect((await server.request('fs/readFile', { path: at('bin-link') })).dataBase64).toBe(b64(bytes));
    const status = await server.request('fs/readFile', { path: '/proc/self/status' });
    expect(Buffer.from(status.dataBase64, 'base64').toString()).toContain('Name:');
    expect((fs.statSync(at('bin')).mode & 0o777).toString(8)).toBe((0o666 & ~process.umask()).toString(8));
  });

  it('rejects bad base64 with -32600 and the decoder text', async () => {
    expect(await server.error('fs/writeFile', { path: at('b'), dataBase64: 'a' })).toEqual({
      code: -32600,
      message: 'fs/writeFile requires valid base64 dataBase64: Invalid input length: 1',
    });
    expect(await server.error('fs/writeFile', { path: at('nodir', 'b'), dataBase64: '' })).toEqual({
      code: -32004,
      message: 'No such file or directory (os error 2)',
    });
    expect(await server.error('fs/writeFile', { path: dir, dataBase64: '' })).toEqual({
      code: -32603,
      message: 'Is a directory (os error 21)',
    });
  });

  it('treats a large payload the same whatever the shape of its line', async () => {
    const data = Buffer.alloc(2 * 1024 * 1024);
    for (let i = 0; i < data.length; i += 4) data.writeUInt32LE((i * 2654435761) >>> 0, i);
    const base64 = data.toString('base64');
    // Compact lines take the large-line path; a space before the value, or an escaped `/`, the ordinary one.
    const lines = (id: string, file: string, value: string) => [
      `{"id":"${id}-compact","method":"fs/writeFile","params":{"path":"${file}-1","dataBase64":"${value}"}}`,
      `{"id":"${id}-spaced","method":"fs/writeFile","params":{"path":"${file}-2","dataBase64": "${value}"}}`,
      `{"id":"${id}-escaped","method":"fs/writeFile","params":{"path":"${file}-3","dataBase64":"${value.replaceAll('/', '\\/')}"}}`,
    ];
    const reply = (id: string) => server.waitFor((m) => m.id === id);
    for (const line of lines('ok', at('large'), base64)) server.sendLine(line);
    for (const shape of ['compact', 'spaced', 'escaped']) expect((await reply(`ok-${shape}`)).result).toEqual({});
    for (const n of [1, 2, 3]) expect(fs.readFileSync(at(`large-${n}`)).equals(data)).toBe(true);
    const broken = `${base64.slice(0, 1_000_000)}*${base64.slice(1_000_001)}`;
    for (const line of lines('bad', at('broken'), broken)) server.sendLine(line);
    const errors = await Promise.all(['compact', 'spaced', 'escaped'].map(async (shape) => (await reply(`bad-${shape}`)).error));
    expect(errors[0].message).toMatch(/^fs\/writeFile requires valid base64 dataBase64: Invalid symbol 42, offset 1000000/);
    expect(errors[1]).toEqual(errors[0]);
    expect(errors[2]).toEqual(errors[0]);
    // The large-line path hands decoded bytes over under a secret token; a made-up one is just bad base64.
    const forged = await server.error('fs/writeFile', { path: at('forged'), dataBase64: '\u0000decoded-payload:00:0' });
    expect(forged).toEqual({ code: -32600, message: 'fs/writeFile requires valid base64 dataBase64: Invalid symbol 0, offset 0.' });
  });

  it('round-trips 16 MiB intact (SHA-256)', async () => {
    const data = Buffer.alloc(16 * 1024 * 1024); // four decode windows past the size read piece by piece (src/transport/large-line.ts)
    for (let i = 0; i < data.length; i += 4096) data.writeUInt32LE((i * 2654435761) >>> 0, i);
    const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    await server.request('fs/writeFile', { path: at('big'), dataBase64: data.toString('base64') });
    expect(sha(fs.readFileSync(at('big')))).toBe(sha(data));
    const read = await server.request('fs/readFile', { path: at('big') });
    expect(sha(Buffer.from(read.dataBase64, 'base64'))).toBe(sha(data));
    fs.rmSync(at('big'));
  }, 60_000);

  it('keeps a large response line whole while output notifications flow', async () => {
    const data = Buffer.alloc(24 * 1024 * 1024, 5);
    fs.writeFileSync(at('mixed'), data);
    await server.start('flood', ['sh', '-c', 'head -c 20000000 /dev/zero']);
    const read = await server.request('fs/readFile', { path: at('mixed') });
    expect(Buffer.from(read.dataBase64, 'base64').equals(data)).toBe(true);
    await server.waitClosed('flood');
    expect(server.outputBytes.get('flood')).toBe(20_000_000);
    fs.rmSync(at('mixed'));
  });

  it('refuses files over the limit without reading them, and endless devices', async () => {
    const handle = fs.openSync(at('sparse'), 'w');
    fs.ftruncateSync(handle, 536_870_913);
    fs.closeSync(handle);
    expect(await server.error('fs/readFile', { path: at('sparse') })).toEqual({
      code: -32600,
      message: 'file is too large to read: limit is 536870912 bytes',
    });
    fs.rmSync(at('sparse'));
    // A device reports size 0 and never ends: reading stops at the limit, after 512 MiB of zeros
    // (2.5 s alone here; a loaded machine takes longer, hence the longer wait).
    server.send({ id: 'zero', method: 'fs/readFile', params: { path: '/dev/zero' } });
    expect((await server.waitFor((m) => m.id === 'zero' && !('method' in m), 50_000)).error).toEqual({
      code: -32600,
      message: 'file is too large to read: limit is 536870912 bytes',
    });
  }, 60_000);
});

describe('directories, metadata, remove, copy', () => {
  it('creates directories like mkdir -p by default, strictly without recursive', async () => {
    expect(await server.request('fs/createDirectory', { path: at('a', 'b', 'c') })).toEqual({});
    expect(await server.request('fs/createDirectory', { path: at('a', 'b', 'c'), recursive: null })).toEqual({});
    fs.writeFileSync(at('file'), '');
    expect(await server.error('fs/createDirectory', { path: at('file') })).toEqual({ code: -32603, message: 'File exists (os error 17)' });
    expect(await server.error('fs/createDirectory', { path: at('file', 'x') })).toEqual({
      code: -32603,
      message: 'Not a directory (os error 20)',
    });
    expect(await server.error('fs/createDirectory', { path: at('a'), recursive: false })).toEqual({
      code: -32603,
      message: 'File exists (os error 17)',
    });
    expect(await server.error('fs/createDirectory', { path: at('x', 'y'), recursive: false })).toEqual({
      code: -32004,
      message: 'No such file or directory (os error 2)',
    });
  });

  it('reports metadata with link kinds, and lists directories following links', async () => {
    fs.mkdirSync(at('m'));
    fs.writeFileSync(at('m', 'f'), 'x');
    fs.symlinkSync(at('m', 'f'), at('m', 'lf'));
    fs.symlinkSync(at('m'), at('m', 'ld'));
    fs.symlinkSync(at('m', 'gone'), at('m', 'dangling'));
    fs.writeFileSync(at('m', '.hidden'), '');
    const meta = await server.request('fs/getMetadata', { path: at('m', 'lf') });
    expect(meta).toMatchObject({ isDirectory: false, isFile: true, isSymlink: true });
    expect(Object.keys(meta).sort()).toEqual(['createdAtMs', 'isDirectory', 'isFile', 'isSymlink', 'modifiedAtMs']);
    expect(meta.modifiedAtMs).toBe(Math.trunc(fs.statSync(at('m', 'f')).mtimeMs));
    expect(await server.request('fs/getMetadata', { path: '/dev/null' })).toMatchObject({ isDirectory: false, isFile: false });
    expect((await server.error('fs/getMetadata', { path: at('m', 'dangling') })).code).toBe(-32004);
    const { entries } = await server.request('fs/readDirectory', { path: at('m') });
    const byName = Object.fromEntries(entries.map((e: any) => [e.fileName, e]));
    expect(Object.keys(byName).sort()).toEqual(['.hidden', 'f', 'ld', 'lf']);
    expect(byName.ld).toEqual({ fileName: 'ld', isDirectory: true, isFile: false });
    expect(byName.lf).toEqual({ fileName: 'lf', isDirectory: false, isFile: true });
    expect(await server.error('fs/readDirectory', { path: at('m', 'f') })).toEqual({
      code: -32603,
      message: 'Not a directory (os error 20)',
    });
  });

  it('removes trees, links (never their targets), and honours force/recursive', async () => {
    fs.mkdirSync(at('r', 'deep'), { recursive: true });
    fs.writeFileSync(at('r', 'deep', 'f'), '');
    fs.mkdirSync(at('keep'));
    fs.writeFileSync(at('keep', 'precious'), 'x');
    fs.symlinkSync(at('keep'), at('r', 'link'));
    expect(await server.error('fs/remove', { path: at('r'), recursive: false })).toEqual({
      code: -32603,
      message: 'Directory not empty (os error 39)',
    });
    expect(await server.request('fs/remove', { path: at('r') })).toEqual({});
    expect(fs.existsSync(at('r'))).toBe(false);
    expect(fs.readFileSync(at('keep', 'precious'), 'utf8')).toBe('x');
    expect(await server.request('fs/remove', { path: at('no', 'such', 'thing') })).toEqual({});
    expect(await server.error('fs/remove', { path: at('nothing'), force: false })).toEqual({
      code: -32004,
      message: 'No such file or directory (os error 2)',
    });
  });

  it('never removes the root directory', async () => {
    // Under a policy with nothing writable: were the guard gone, the removal would run confined
    // by bwrap and fail read-only, not take the machine with it.
    const sandbox = managedPolicy(dir, [special('root', 'read')]);
    const refused = { code: -32600, message: 'fs/remove refuses to remove the root directory /' };
    for (const root of ['/', '/tmp/..', 'file:///', 'file:///tmp/..'])
      expect(await server.error('fs/remove', { path: root, sandbox })).toEqual(refused);
  });

  it('never sends a removal of the root to another server: the reference carries it out', async () => {
    const other = new ServerProcess([], process.env, undefined, ['cat', []]);
    try {
      for (const root of ['/', '//', '/tmp/..', 'file:///', 'file:///tmp/..'])
        expect(() => other.send({ id: 1, method: 'fs/remove', params: { path: root } })).toThrow('not sent to a reference server');
      other.send({ id: 2, method: 'fs/remove', params: { path: '/tmp/no-such-exec-server-path' } });
      expect((await other.waitFor((m) => m.id === 2)).params.path).toBe('/tmp/no-such-exec-server-path');
      expect(other.messages).toHaveLength(1);
    } finally {
      other.child.kill();
      await other.exited;
    }
  });

  it('copies files, links and trees with the reference rules', async () => {
    fs.mkdirSync(at('src', 'sub'), { recursive: true });
    fs.writeFileSync(at('src', 'a'), 'A');
    fs.writeFileSync(at('src', 'sub', 'b'), 'B');
    fs.symlinkSync('a', at('src', 'la'));
    expect(await server.error('fs/copy', { sourcePath: at('src'), destinationPath: at('dst') })).toEqual({
      code: -32602,
      message: 'missing field `recursive`',
    });
    expect(await server.error('fs/copy', { sourcePath: at('src'), destinationPath: at('dst'), recursive: false })).toEqual({
      code: -32600,
      message: 'fs/copy requires recursive: true when sourcePath is a directory',
    });
    expect(await server.request('fs/copy', { sourcePath: at('src'), destinationPath: at('dst'), recursive: true })).toEqual({});
    expect(fs.readFileSync(at('dst', 'sub', 'b'), 'utf8')).toBe('B');
    expect(fs.readlinkSync(at('dst', 'la'))).toBe('a');
    expect(await server.error('fs/copy', { sourcePath: at('src'), destinationPath: at('dst'), recursive: true })).toEqual({
      code: -32603,
      message: 'File exists (os error 17)',
    });
    expect(await server.error('fs/copy', { sourcePath: at('src'), destinationPath: at('src', 'sub', 'x'), recursive: true })).toEqual({
      code: -32600,
      message: 'fs/copy cannot copy a directory to itself or one of its descendants',
    });
    expect(await server.request('fs/copy', { sourcePath: at('src', 'a'), destinationPath: at('src', 'a'), recursive: false })).toEqual({});
    expect(fs.readFileSync(at('src', 'a'), 'utf8')).toBe('A');
    expect(await server.error('fs/copy', { sourcePath: at('src', 'a'), destinationPath: at('src', 'sub'), recursive: false })).toEqual({
      code: -32603,
      message: 'Is a directory (os error 21)',
    });
    expect(await server.error('fs/copy', { sourcePath: '/dev/null', destinationPath: at('devnull'), recursive: false })).toEqual({
      code: -32600,
      message: 'fs/copy only supports regular files, directories, and symlinks',
    });
  });

  it('canonicalizes like realpath', async () => {
    fs.mkdirSync(at('c', 'd'), { recursive: true });
    fs.symlinkSync(at('c'), at('c-link'));
    expect(await server.request('fs/canonicalize', { path: `${at('c-link')}/./d/../d` })).toEqual({ path: fs.realpathSync(at('c', 'd')) });
  });
});
