/**
 * fs/copy and fs/readDirectory on trees that are already there, beside Codex
 * 0.169.0 (when installed): a directory copied onto one merges into it, files
 * are replaced, a symlink in the way stops the copy with the reference's
 * error, and entries come in the OS's order.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Arenas, arenas } from './support/arenas.js';

let contest: Arenas;
const uri = (relative: string) => `file://R/${relative}`;
const copy = (from: string, to: string, recursive = true) =>
  contest.both('fs/copy', { sourcePath: uri(from), destinationPath: uri(to), recursive });
const read = async (relative: string) => {
  const answer = (await contest.both('fs/readFile', { path: uri(relative) })) as { dataBase64?: string };
  return answer.dataBase64 === undefined ? answer : Buffer.from(answer.dataBase64, 'base64').toString();
};
const names = async (relative: string) =>
  ((await contest.both('fs/readDirectory', { path: uri(relative) })) as { entries: Array<{ fileName: string }> }).entries.map(
    (entry) => entry.fileName,
  );

function tree(root: string): void {
  const write = (relative: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true });
    fs.writeFileSync(path.join(root, relative), text);
  };
  write('src/a.txt', 'new a\n');
  write('src/sub/b.txt', 'new b\n');
  write('merge/a.txt', 'old a\n');
  write('merge/sub/c.txt', 'old c\n');
  fs.mkdirSync(path.join(root, 'merge', 'other'));
  fs.mkdirSync(path.join(root, 'target'));
  fs.symlinkSync('target', path.join(root, 'to-target'));
  write('blocked/keep.txt', 'kept\n');
  fs.symlinkSync('nowhere', path.join(root, 'blocked', 'link'));
  write('linked/x.txt', 'x\n');
  write('linked/y.txt', 'y\n');
  fs.symlinkSync('x.txt', path.join(root, 'linked', 'link'));
  write('linked/z.txt', 'z\n');
  write('file.txt', 'a file\n');
  fs.symlinkSync('src/sub', path.join(root, 'into-source'));
  fs.symlinkSync('loop', path.join(root, 'loop'));
  // Names that are not UTF-8: a file, a directory and what is in it, a symlink whose target is not either.
  const raw = (relative: string) => Buffer.concat([Buffer.from(`${root}/raw/`), Buffer.from(relative, 'latin1')]);
  fs.mkdirSync(raw('d\xfe'), { recursive: true });
  fs.writeFileSync(raw('bad\xffname'), 'bad\n');
  fs.writeFileSync(raw('d\xfe/in'), 'in\n');
  fs.symlinkSync(Buffer.from('bad\xffname', 'latin1'), raw('link\xff'));
}

beforeAll(async () => {
  contest = await arenas('0.169.0', tree);
  for (const { server } of contest.list) await server.request('environment/info', null);
});

afterAll(() => contest.dispose());

describe('fs/copy onto what is there, side by side with the reference', () => {
  it('merges a directory into an existing one, replacing files and keeping the rest', async () => {
    expect(await copy('src', 'merge')).toEqual({});
    expect(await read('merge/a.txt')).toBe('new a\n');
    expect(await read('merge/sub/b.txt')).toBe('new b\n');
    expect(await read('merge/sub/c.txt')).toBe('old c\n');
    expect((await names('merge')).sort()).toEqual(['a.txt', 'other', 'sub']);
  });

  it('merges through a symlink to a directory', async () => {
    expect(await copy('src', 'to-target')).toEqual({});
    expect(await read('target/sub/b.txt')).toBe('new b\n');
  });

  it('refuses a directory onto a file, a file onto a directory, and a symlink onto anything', async () => {
    expect(await copy('src', 'file.txt')).toEqual({ code: -32603, message: 'File exists (os error 17)' });
    expect(await copy('src/a.txt', 'merge', false)).toEqual({ code: -32603, message: 'Is a directory (os error 21)' });
    expect(await copy('blocked/link', 'file.txt', false)).toEqual({ code: -32603, message: 'File exists (os error 17)' });
    expect(await read('file.txt')).toBe('a file\n');
  });

  it('refuses a directory onto a symlink that leads nowhere or round in a loop: it is there', async () => {
    expect(await copy('src', 'blocked/link')).toEqual({ code: -32603, message: 'File exists (os error 17)' });
    expect(await copy('src', 'loop')).toEqual({ code: -32603, message: 'File exists (os error 17)' });
  });

  it('refuses a directory onto a symlink that leads into it', async () => {
    expect(await copy('src', 'into-source')).toMatchObject({ code: -32600 });
    expect(await names('src/sub')).toEqual(['b.txt']);
  });

  it('makes the directories missing on the way to a directory copy, not to a file copy', async () => {
    expect(await copy('src', 'new/deeper/copy')).toEqual({});
    expect(await read('new/deeper/copy/sub/b.txt')).toBe('new b\n');
    expect(await copy('src/a.txt', 'absent/a.txt', false)).toEqual({ code: -32004, message: 'No such file or directory (os error 2)' });
    expect(await copy('src', 'file.txt/under')).toEqual({ code: -32603, message: 'Not a directory (os error 20)' });
  });

  it('replaces a file', async () => {
    expect(await copy('src/a.txt', 'file.txt', false)).toEqual({});
    expect(await read('file.txt')).toBe('new a\n');
  });

  it('stops at a symlink in the way, having copied what came before it in the OS order', async () => {
    expect(await copy('linked', 'blocked')).toEqual({ code: -32603, message: 'File exists (os error 17)' });
    expect(await names('linked')).toHaveLength(4);
    // The reference copies up to the symlink in the OS order; we copy a batch of files side by
    // side, so those after it came too: ours is what the reference copied and the rest of the batch.
    const copied = contest.list.map(({ root }) => fs.readdirSync(path.join(root, 'blocked')).sort());
    expect(copied[0]).toEqual(['keep.txt', 'link', 'x.txt', 'y.txt', 'z.txt']);
    for (const theirs of copied.slice(1)) expect(copied[0]).toEqual(expect.arrayContaining(theirs));
  });
});

describe('fs/copy and fs/readDirectory of names that are not UTF-8', () => {
  it('copies them byte for byte and lists them, a symlink among them, as the reference does', async () => {
    expect(await copy('raw', 'raw-copy')).toEqual({});
    expect(await names('raw')).toHaveLength(3);
    expect(await names('raw-copy')).toEqual(await names('raw'));
    for (const { root } of contest.list) {
      const at = (relative: string) => Buffer.concat([Buffer.from(`${root}/raw-copy/`), Buffer.from(relative, 'latin1')]);
      expect(fs.readFileSync(at('bad\xffname'), 'utf8')).toBe('bad\n');
      expect(fs.readFileSync(at('d\xfe/in'), 'utf8')).toBe('in\n');
      expect(fs.readlinkSync(at('link\xff'), { encoding: 'buffer' }).equals(Buffer.from('bad\xffname', 'latin1'))).toBe(true);
    }
  });
});
