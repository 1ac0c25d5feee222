/**
 * `fs/copy` of wide directories, whose files are copied a batch at a time
 * (src/server/fs/side-by-side.ts): a tree of every kind of entry comes
 * through exact, a merge replaces what is there and keeps the rest, and a
 * symlink in the way stops the copy after its batch.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIDE_BY_SIDE } from '../src/server/fs/side-by-side.js';
import { ServerProcess } from './support/server-process.js';

let server: ServerProcess;
let dir: string;
beforeAll(async () => {
  server = await ServerProcess.started();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-copy-wide-'));
});
afterAll(async () => {
  await server.dispose();
  fs.rmSync(dir, { recursive: true, force: true });
});

const copy = (from: string, to: string) =>
  server.call('fs/copy', { sourcePath: path.join(dir, from), destinationPath: path.join(dir, to), recursive: true });

/** Every entry under `top` (names as latin1), with a file's bytes, a link's target, and a mode. */
function snapshot(top: string): Record<string, string> {
  const found: Record<string, string> = {};
  const visit = (at: Buffer, relative: string) => {
    for (const name of fs.readdirSync(at, { encoding: 'buffer' })) {
      const full = Buffer.concat([at, Buffer.from('/'), name]);
      const key = `${relative}/${name.toString('latin1')}`;
      const stat = fs.lstatSync(full);
      if (stat.isSymbolicLink()) found[key] = `link ${fs.readlinkSync(full, { encoding: 'buffer' }).toString('latin1')}`;
      else if (stat.isDirectory()) {
        found[key] = 'dir';
        visit(full, key);
      } else if (stat.isFile()) found[key] = `file ${(stat.mode & 0o777).toString(8)} ${fs.readFileSync(full).toString('latin1')}`;
      else found[key] = 'other';
    }
  };
  visit(Buffer.from(top), '');
  return found;
}

describe('fs/copy of a wide directory', () => {
  it('copies files, empty files, links and directories between them exact, and leaves a FIFO out', async () => {
    const source = path.join(dir, 'mixed');
    fs.mkdirSync(source);
    for (let i = 0; i < 500; i++) {
      const at = path.join(source, `e${i}`);
      if (i % 37 === 0) {
        fs.mkdirSync(at);
        for (let j = 0; j < 70; j++) fs.writeFileSync(path.join(at, `inner${j}`), `${i}/${j}`);
      } else if (i % 11 === 0) fs.symlinkSync(`e${i - 1}`, at);
      else if (i % 13 === 0) fs.writeFileSync(at, '');
      else fs.writeFileSync(at, `content ${i}\n`.repeat(i % 5), { mode: i % 2 ? 0o600 : 0o755 });
    }
    fs.writeFileSync(Buffer.from(`${source}/not-utf8-\xff`, 'latin1'), 'raw');
    execFileSync('mkfifo', [path.join(source, 'fifo')]);
    expect(await copy('mixed', 'mixed-copy')).toEqual(expect.objectContaining({ result: {} }));
    const expected = snapshot(source);
    delete expected['/fifo'];
    expect(snapshot(path.join(dir, 'mixed-copy'))).toEqual(expected);
  });

  it('merges into a directory that is there: files replaced, new ones made, the rest kept', async () => {
    const source = path.join(dir, 'newer');
    const destination = path.join(dir, 'older');
    fs.mkdirSync(path.join(source, 'sub'), { recursive: true });
    fs.mkdirSync(path.join(destination, 'sub'), { recursive: true });
    for (let i = 0; i < 200; i++) {
      fs.writeFileSync(path.join(source, `f${i}`), `new ${i}`);
      if (i % 2) fs.writeFileSync(path.join(destination, `f${i}`), `old ${i}`);
      if (i % 3 === 0) fs.writeFileSync(path.join(destination, `only-old${i}`), 'kept');
    }
    fs.writeFileSync(path.join(source, 'sub', 'inner'), 'new inner');
    fs.writeFileSync(path.join(destination, 'sub', 'inner'), 'old inner');
    fs.writeFileSync(path.join(destination, 'sub', 'beside'), 'kept');
    const before = snapshot(destination);
    expect(await copy('newer', 'older')).toEqual(expect.objectContaining({ result: {} }));
    const after = snapshot(destination);
    const copied = snapshot(source);
    expect(after).toEqual({ ...before, ...copied });
  });

  it('merges into a directory holding many times more names than the source has, and into one with a FIFO', async () => {
    const source = path.join(dir, 'few');
    const destination = path.join(dir, 'crowded');
    fs.mkdirSync(source);
    fs.mkdirSync(destination);
    for (let i = 0; i < 80; i++) fs.writeFileSync(path.join(source, `f${i}`), `new ${i}`);
    for (let i = 0; i < 400; i++) fs.writeFileSync(path.join(destination, `other${i}`), 'kept');
    for (let i = 0; i < 80; i += 2) fs.writeFileSync(path.join(destination, `f${i}`), 'old');
    const before = snapshot(destination);
    expect(await copy('few', 'crowded')).toEqual(expect.objectContaining({ result: {} }));
    expect(snapshot(destination)).toEqual({ ...before, ...snapshot(source) });
    fs.rmSync(path.join(destination, 'f79'));
    execFileSync('mkfifo', [path.join(destination, 'f79')]);
    expect((await copy('few', 'crowded')).error).toEqual({ code: -32600, message: expect.stringContaining('is not a file') });
  });

  it('stops at a symlink in the way with EEXIST, the files of later batches not copied', async () => {
    const source = path.join(dir, 'into-link');
    const destination = path.join(dir, 'has-link');
    fs.mkdirSync(source);
    fs.mkdirSync(destination);
    for (let i = 0; i < 300; i++) fs.writeFileSync(path.join(source, `f${i}`), `${i}`);
    fs.symlinkSync('f0', path.join(source, 'link'));
    fs.symlinkSync('elsewhere', path.join(destination, 'link'));
    const order: string[] = [];
    for await (const entry of await fs.promises.opendir(source)) order.push(entry.name);
    const failsAt = order.indexOf('link');
    expect((await copy('into-link', 'has-link')).error).toEqual({ code: -32603, message: 'File exists (os error 17)' });
    // Only files and the link: the batches are the listing's runs of SIDE_BY_SIDE.
    const nextBatch = (Math.floor(failsAt / SIDE_BY_SIDE) + 1) * SIDE_BY_SIDE;
    const copied = fs.readdirSync(destination).filter((name) => name !== 'link');
    expect(copied.sort()).toEqual(
      order
        .slice(0, nextBatch)
        .filter((name) => name !== 'link')
        .sort(),
    );
    expect(fs.readlinkSync(path.join(destination, 'link'))).toBe('elsewhere');
  });

  it('copies the files of /proc, which say they are empty, with their content', async () => {
    const source = '/proc/sys/fs/inotify';
    const destination = path.join(dir, 'from-proc');
    const response = await server.call('fs/copy', { sourcePath: source, destinationPath: destination, recursive: true });
    expect(response.error).toBeUndefined();
    const names = fs.readdirSync(source).sort();
    expect(names.length).toBeGreaterThan(0);
    expect(fs.statSync(path.join(source, names[0]!)).size).toBe(0); // what makes the case
    for (const name of names) {
      const copied = fs.readFileSync(path.join(destination, name), 'utf8');
      expect(copied, name).toMatch(/^\d+\n$/);
      expect(copied, name).toBe(fs.readFileSync(path.join(source, name), 'utf8'));
    }
  });
});
