/**
 * Generation 1 (native paths) beside Codex 0.134.0's exec-server (when
 * installed). Each contestant works in its own scratch tree, built the same
 * way, so that writes by one cannot change the other's answers.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Contestant, contestants, GENERATION_1_REFERENCE, hasGeneration1Reference, normalize } from './support/differential.js';

interface Arena extends Contestant {
  root: string;
}

let arenas: Arena[];

/** f.txt, d/sub, d/run.sh, and `link` → d/sub: `link/..` is `d` physically, the root lexically. */
function scratchTree(): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'differential-gen1-')));
  fs.writeFileSync(path.join(root, 'f.txt'), 'hi\n');
  fs.mkdirSync(path.join(root, 'd', 'sub'), { recursive: true });
  fs.writeFileSync(path.join(root, 'd', 'run.sh'), '#!/bin/sh\necho ran in d\n', { mode: 0o755 });
  fs.symlinkSync('d/sub', path.join(root, 'link'));
  return root;
}

beforeAll(async () => {
  const list = await contestants(process.env, GENERATION_1_REFERENCE);
  arenas = list.map((contestant) => ({ ...contestant, root: scratchTree() }));
});

afterAll(async () => {
  await Promise.all(arenas.map((arena) => arena.dispose()));
  for (const { root } of arenas) fs.rmSync(root, { recursive: true, force: true });
});

/** Every contestant's answer to one request (`R` stands for its root), compared; birth times left out (musl reports 0). */
async function both(method: string, params: Record<string, unknown>): Promise<unknown> {
  const answers: Record<string, unknown> = {};
  for (const { name, server, root } of arenas) {
    const rooted = JSON.parse(JSON.stringify(params).split('R/').join(`${root}/`));
    const response = await server.call(method, rooted);
    const { createdAtMs: _birth, ...answer } = normalize(response.error ?? response.result, root) as Record<string, unknown>;
    answers[name] = answer;
  }
  if (hasGeneration1Reference) expect(answers.ours).toEqual(answers.reference);
  return answers.ours;
}

/** Output of a started process once it closed, on every contestant. */
async function outputOf(processId: string): Promise<unknown> {
  const outputs: Record<string, string> = {};
  for (const { name, server, root } of arenas) {
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
    for (const { server, root } of arenas) {
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
});
