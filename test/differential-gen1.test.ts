/**
 * Generation 1 (native paths) beside Codex 0.134.0's exec-server (when
 * installed). Each contestant works in its own scratch tree, built the same
 * way, so that writes by one cannot change the other's answers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Arenas, arenas } from './support/arenas.js';
import { GENERATION_1_REFERENCE, hasGeneration1Reference } from './support/differential.js';

let contest: Arenas;
const both = (method: string, params: Record<string, unknown>) => contest.both(method, params);

/** f.txt, d/sub, d/run.sh, and `link` → d/sub: `link/..` is `d` physically, the root lexically. */
function scratchTree(root: string): void {
  fs.writeFileSync(path.join(root, 'f.txt'), 'hi\n');
  fs.mkdirSync(path.join(root, 'd', 'sub'), { recursive: true });
  fs.writeFileSync(path.join(root, 'd', 'run.sh'), '#!/bin/sh\necho ran in d\n', { mode: 0o755 });
  fs.symlinkSync('d/sub', path.join(root, 'link'));
}

beforeAll(async () => {
  contest = await arenas(GENERATION_1_REFERENCE, scratchTree);
});

afterAll(() => contest.dispose());

/** Output of a started process once it closed, on every contestant. */
async function outputOf(processId: string): Promise<unknown> {
  const outputs: Record<string, string> = {};
  for (const { name, server, root } of contest.list) {
    await server.waitClosed(processId);
    outputs[name] = server.output(processId).toString().split(root).join('R');
  }
  if (hasGeneration1Reference) expect(outputs.ours).toEqual(outputs.reference);
  return outputs.ours;
}

describe(`generation 1, side by side with Codex ${GENERATION_1_REFERENCE}`, () => {
  it('normalizes fs paths lexically: `..` after a missing directory or a symlink, `.`, and a trailing slash', async () => {
    const file = { isDirectory: false, isFile: true, isSymlink: false };
    expect(await both('fs/getMetadata', { path: 'R/nope/../f.txt' })).toMatchObject(file);
    expect(await both('fs/getMetadata', { path: 'R/link/../f.txt' })).toMatchObject(file);
    expect(await both('fs/getMetadata', { path: 'R/f.txt/' })).toMatchObject(file);
    expect(await both('fs/readFile', { path: 'R/nope/./../f.txt' })).toEqual({ dataBase64: 'aGkK' });
    expect(await both('fs/readDirectory', { path: 'R/nope/../d/' })).toEqual({
      entries: expect.arrayContaining([{ fileName: 'sub', isDirectory: true, isFile: false }]),
    });
    expect(await both('fs/writeFile', { path: 'R/nope/../w.txt', dataBase64: 'aGk=' })).toEqual({});
    expect(await both('fs/readFile', { path: 'R/w.txt' })).toEqual({ dataBase64: 'aGk=' });
    expect(await both('fs/createDirectory', { path: 'R/nope/../made/', recursive: false })).toEqual({});
    expect(await both('fs/getMetadata', { path: 'R/made' })).toMatchObject({ isDirectory: true });
    expect(await both('fs/copy', { sourcePath: 'R/link/../f.txt', destinationPath: 'R/nope/../copy.txt', recursive: false })).toEqual({});
    expect(await both('fs/remove', { path: 'R/nope/../copy.txt', recursive: false, force: false })).toEqual({});
    expect(await both('fs/getMetadata', { path: 'R/copy.txt' })).toMatchObject({ code: -32004 });
  });

  it('leaves cwd to the kernel: `..` after a symlink is physical, and the program is found from there', async () => {
    for (const { server, root } of contest.list) {
      await server.start('physical', ['pwd'], { cwd: `${root}/link/..` });
      await server.start('relative-program', ['../run.sh'], { cwd: `${root}/link` });
    }
    expect(await outputOf('physical')).toBe('R/d\n');
    expect(await outputOf('relative-program')).toBe('ran in d\n');
    expect(await both('process/start', { processId: 'missing', argv: ['pwd'], cwd: 'R/nope/..', env: {}, tty: false })).toEqual({
      code: -32603,
      message: 'No such file or directory (os error 2)',
    });
    expect(await both('process/start', { processId: 'empty', argv: ['pwd'], cwd: '', env: {}, tty: false })).toEqual({
      code: -32603,
      message: 'No such file or directory (os error 2)',
    });
  });

  it('finds a bare name in the cwd where PATH names it (an empty entry, or an empty PATH), as execvp', async () => {
    for (const { server, root } of contest.list) {
      await server.start('empty-entry', ['run.sh'], { cwd: `${root}/d`, env: { PATH: ':/usr/bin:/bin' } });
      await server.start('empty-path', ['run.sh'], { cwd: `${root}/d`, env: { PATH: '' } });
      await server.start('empty-entry-pty', ['run.sh'], { cwd: `${root}/d`, env: { PATH: '/usr/bin::/bin' }, tty: true });
    }
    expect(await outputOf('empty-entry')).toBe('ran in d\n');
    expect(await outputOf('empty-path')).toBe('ran in d\n');
    expect(await outputOf('empty-entry-pty')).toBe('ran in d\r\n');
  });

  it('words a NUL in the cwd or in envPolicy.set as the reference, not as Node', async () => {
    const nul = { code: -32603, message: 'nul byte found in provided data' };
    const start = (processId: string, extra: Record<string, unknown>) =>
      both('process/start', { processId, argv: ['true'], cwd: 'R/', env: {}, tty: false, ...extra });
    expect(await start('nul-cwd', { cwd: 'R/a\u0000b' })).toEqual(nul);
    const envPolicy = { inherit: 'none', ignoreDefaultExcludes: false, exclude: [], set: { A: 'x\u0000y' }, includeOnly: [] };
    expect(await start('nul-set', { envPolicy })).toEqual(nul);
  });
});
