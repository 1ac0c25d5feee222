/**
 * fs methods under a sandbox policy: writes run confined by bwrap, so the
 * kernel refuses what the policy does not allow (−32603 `Read-only file
 * system (os error 30)`, as Codex 0.169 answers) and nothing outside changes;
 * reads are not confined. Escapes tried: outside paths, a symlink out of the
 * workspace, `..`, `.git`, block writes, copies, removals.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBwrap } from '../src/server/sandbox/bwrap.js';
import { workspaceWrite } from './support/sandbox-policy.js';
import { b64, ServerProcess } from './support/server-process.js';

const hasBwrap = findBwrap(undefined) !== undefined;
const DENIED = { code: -32603, message: 'Read-only file system (os error 30)' };
let base: string;
let workspace: string;
let outside: string;
let server: ServerProcess;
const uri = (native: string) => pathToFileURL(native).href;
const at = (dir: string, name: string) => path.join(dir, name);

beforeAll(async () => {
  // Outside /tmp: the policy makes /tmp writable, and the point is a directory that is not.
  base = fs.mkdtempSync(path.join(os.homedir(), '.exec-server-sandbox-fs-'));
  workspace = at(base, 'work');
  outside = at(base, 'outside');
  fs.mkdirSync(at(workspace, '.git'), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(at(outside, 'keep.txt'), 'original');
  fs.symlinkSync(outside, at(workspace, 'link-out'));
  server = await ServerProcess.started();
});

afterAll(async () => {
  await server?.dispose();
  fs.rmSync(base, { recursive: true, force: true });
});

const policy = () => workspaceWrite(workspace);
const call = (method: string, params: Record<string, unknown>) => server.call(method, { ...params, sandbox: policy() });
const answer = async (method: string, params: Record<string, unknown>) => {
  const response = await call(method, params);
  return response.error ?? response.result;
};

describe.skipIf(!hasBwrap)('fs methods under a sandbox policy (bwrap)', () => {
  it('writes inside the workspace and refuses outside, leaving outside untouched', async () => {
    expect(await answer('fs/writeFile', { path: uri(at(workspace, 'in.txt')), dataBase64: b64('inside') })).toEqual({});
    expect(fs.readFileSync(at(workspace, 'in.txt'), 'utf8')).toBe('inside');
    expect(await answer('fs/writeFile', { path: uri(at(outside, 'new.txt')), dataBase64: b64('x') })).toEqual(DENIED);
    expect(await answer('fs/writeFile', { path: uri(at(outside, 'keep.txt')), dataBase64: b64('x') })).toEqual(DENIED);
    expect(await answer('fs/createDirectory', { path: uri(at(outside, 'dir')) })).toEqual(DENIED);
    expect(await answer('fs/remove', { path: uri(at(outside, 'keep.txt')) })).toEqual(DENIED);
    expect(
      await answer('fs/copy', {
        sourcePath: uri(at(workspace, 'in.txt')),
        destinationPath: uri(at(outside, 'copy.txt')),
        recursive: false,
      }),
    ).toEqual(DENIED);
    expect(fs.readdirSync(outside)).toEqual(['keep.txt']);
    expect(fs.readFileSync(at(outside, 'keep.txt'), 'utf8')).toBe('original');
  });

  it('denies escapes through a symlink, `..` and into .git', async () => {
    expect(await answer('fs/writeFile', { path: uri(at(workspace, 'link-out/escape.txt')), dataBase64: b64('x') })).toEqual(DENIED);
    expect(await answer('fs/writeFile', { path: `${uri(workspace)}/../outside/dots.txt`, dataBase64: b64('x') })).toEqual(DENIED);
    expect(await answer('fs/writeFile', { path: uri(at(workspace, '.git/config')), dataBase64: b64('x') })).toEqual(DENIED);
    expect(fs.readdirSync(outside)).toEqual(['keep.txt']);
    expect(fs.readdirSync(at(workspace, '.git'))).toEqual([]);
  });

  it('reads anywhere, through the symlink too', async () => {
    expect(await answer('fs/readFile', { path: uri(at(outside, 'keep.txt')) })).toEqual({ dataBase64: b64('original') });
    expect(await answer('fs/readFile', { path: uri(at(workspace, 'link-out/keep.txt')) })).toEqual({ dataBase64: b64('original') });
    expect(await answer('fs/getMetadata', { path: uri(outside) })).toMatchObject({ isDirectory: true });
  });

  it('opens for replace only where the policy allows writing, and never truncates outside', async () => {
    expect(await answer('fs/open', { handleId: 'out', path: uri(at(outside, 'keep.txt')), mode: 'replace' })).toEqual(DENIED);
    expect(fs.readFileSync(at(outside, 'keep.txt'), 'utf8')).toBe('original');
    expect(await answer('fs/open', { handleId: 'in', path: uri(at(workspace, 'blocks.txt')), mode: 'replace' })).toEqual({
      handleId: 'in',
    });
    expect(await answer('fs/writeBlock', { handleId: 'in', offset: 0, chunk: b64('block') })).toEqual({});
    expect(await answer('fs/close', { handleId: 'in' })).toEqual({});
    expect(fs.readFileSync(at(workspace, 'blocks.txt'), 'utf8')).toBe('block');
  });

  it('answers an open for replace of a FIFO nobody reads at once, as without a policy (it waited for a reader)', async () => {
    const fifo = at(workspace, 'fifo');
    execFileSync('mkfifo', [fifo]);
    try {
      const enxio = { code: -32603, message: 'No such device or address (os error 6)' };
      expect(await server.error('fs/open', { handleId: 'plain', path: uri(fifo), mode: 'replace' })).toEqual(enxio);
      expect(await answer('fs/open', { handleId: 'fifo', path: uri(fifo), mode: 'replace' })).toEqual(enxio);
    } finally {
      fs.rmSync(fifo);
    }
  });

  it('truncates nothing for an open it refuses (an id taken meanwhile, no handle left)', async () => {
    fs.writeFileSync(at(workspace, 'first.txt'), 'first');
    fs.writeFileSync(at(workspace, 'second.txt'), 'second');
    // Sent together: the second asks for the id while the first is still in the sandbox.
    const [first, second] = await Promise.all([
      answer('fs/open', { handleId: 'same', path: uri(at(workspace, 'first.txt')), mode: 'replace' }),
      answer('fs/open', { handleId: 'same', path: uri(at(workspace, 'second.txt')), mode: 'replace' }),
    ]);
    expect([first, second]).toEqual([{ handleId: 'same' }, { code: -32600, message: 'file handle `same` already exists' }]);
    expect(fs.readFileSync(at(workspace, 'first.txt'), 'utf8')).toBe('');
    expect(fs.readFileSync(at(workspace, 'second.txt'), 'utf8')).toBe('second');
    expect(await answer('fs/close', { handleId: 'same' })).toEqual({});
  });

  it('removes and copies inside the workspace as without a policy', async () => {
    fs.writeFileSync(at(workspace, 'gone.txt'), 'x');
    expect(
      await answer('fs/copy', {
        sourcePath: uri(at(outside, 'keep.txt')),
        destinationPath: uri(at(workspace, 'copied.txt')),
        recursive: false,
      }),
    ).toEqual({});
    expect(fs.readFileSync(at(workspace, 'copied.txt'), 'utf8')).toBe('original');
    expect(await answer('fs/remove', { path: uri(at(workspace, 'gone.txt')) })).toEqual({});
    expect(fs.existsSync(at(workspace, 'gone.txt'))).toBe(false);
    expect(await answer('fs/createDirectory', { path: uri(at(workspace, 'a/b')) })).toEqual({});
    expect(fs.statSync(at(workspace, 'a/b')).isDirectory()).toBe(true);
  });
});

describe.skipIf(!hasBwrap)('fs/open replace under a policy cannot reach a file the sandbox sees elsewhere', () => {
  it('refuses a path whose file in the sandbox is not the file here (/dev is private inside), and leaves it intact', async () => {
    const victim = `/dev/shm/exec-server-victim-${process.pid}`;
    fs.writeFileSync(victim, 'secret');
    try {
      expect(await answer('fs/open', { handleId: 'shm', path: uri(victim), mode: 'replace' })).toEqual(DENIED);
      expect(fs.readFileSync(victim, 'utf8')).toBe('secret');
    } finally {
      fs.rmSync(victim, { force: true });
    }
  });
});
