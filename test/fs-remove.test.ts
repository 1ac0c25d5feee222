/**
 * A recursive `fs/remove`: failing part-way (as an unprivileged user), and in
 * trees whose paths mislead (names that are not UTF-8, deeper than PATH_MAX, a
 * directory swapped for a symlink meanwhile, another removal at once). The
 * answers and what is left behind are those of both references (Codex 0.134
 * and 0.169, compared by hand: `src/server/fs/remove-tree.ts`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIDE_BY_SIDE } from '../src/server/fs/side-by-side.js';
import { ServerProcess } from './support/server-process.js';

const NOBODY = { uid: 65534, gid: 65534 };
let server: ServerProcess;
let dir: string;
beforeAll(async () => {
  server = await ServerProcess.started([], process.env, NOBODY);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-remove-'));
  // Nobody may remove what is in it (a tree that goes whole takes its own entry with it).
  fs.chmodSync(dir, 0o777);
});
afterAll(async () => {
  await server.dispose();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A fresh directory that nobody may change, with `names` in it owned by nobody. */
function tree(name: string, names: string[]): string {
  const top = path.join(dir, name);
  fs.mkdirSync(top, { mode: 0o777 });
  fs.chmodSync(top, 0o777);
  for (const entry of names) {
    fs.writeFileSync(path.join(top, entry), entry);
    fs.chownSync(path.join(top, entry), NOBODY.uid, NOBODY.gid);
  }
  return top;
}

/** The entries of `directory` in the order it lists them (not sorted), as the removal meets them. */
async function listed(directory: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of await fs.promises.opendir(directory)) names.push(entry.name);
  return names;
}

describe('fs/remove, recursive, failing part-way', () => {
  it('stops at the first entry it cannot remove, with that error, leaving what comes after it', async () => {
    const top = tree('stops', []);
    // Files nobody may remove, between directories of root's whose files nobody may not: whatever
    // order the file system lists them in, some files come after the first directory.
    for (let i = 0; i < 8; i++) {
      fs.writeFileSync(path.join(top, `file-${i}`), 'x');
      fs.chownSync(path.join(top, `file-${i}`), NOBODY.uid, NOBODY.gid);
      fs.mkdirSync(path.join(top, `locked-${i}`), { mode: 0o755 });
      fs.writeFileSync(path.join(top, `locked-${i}`, 'x'), 'x');
    }
    const order = await listed(top);
    const failsAt = order.findIndex((name) => name.startsWith('locked-'));
    expect(await server.error('fs/remove', { path: top, recursive: true, force: false })).toEqual({
      code: -32600,
      message: 'Permission denied (os error 13)',
    });
    expect((await listed(top)).sort()).toEqual(order.slice(failsAt).sort());
    expect(fs.readdirSync(path.join(top, order[failsAt]!))).toEqual(['x']);
  });

  it("words unlink's EPERM as EPERM (a sticky directory keeps another user's file)", async () => {
    const top = path.join(dir, 'sticky');
    fs.mkdirSync(top);
    fs.chmodSync(top, 0o1777);
    fs.writeFileSync(path.join(top, 'roots'), 'x');
    expect(await server.error('fs/remove', { path: top, recursive: true, force: false })).toEqual({
      code: -32600,
      message: 'Operation not permitted (os error 1)',
    });
    expect(fs.readdirSync(top)).toEqual(['roots']);
  });

  it('unlinks files a batch at a time: at one it may not remove, those of later batches stay', async () => {
    const top = path.join(dir, 'sticky-wide');
    fs.mkdirSync(top);
    fs.chmodSync(top, 0o1777);
    for (let i = 0; i < 300; i++) {
      fs.writeFileSync(path.join(top, `f${i}`), 'x');
      fs.chownSync(path.join(top, `f${i}`), NOBODY.uid, NOBODY.gid);
    }
    fs.writeFileSync(path.join(top, 'roots'), 'x');
    const order = await listed(top);
    const failsAt = order.indexOf('roots');
    expect(await server.error('fs/remove', { path: top, recursive: true, force: false })).toEqual({
      code: -32600,
      message: 'Operation not permitted (os error 1)',
    });
    const nextBatch = (Math.floor(failsAt / SIDE_BY_SIDE) + 1) * SIDE_BY_SIDE;
    expect((await listed(top)).sort()).toEqual(['roots', ...order.slice(nextBatch)].sort());
  });

  it('removes a whole tree, a symlink in it but never what it points to', async () => {
    const outside = tree('outside', ['kept']);
    const top = tree('whole', ['a', 'b']);
    fs.mkdirSync(path.join(top, 'sub', 'deeper'), { recursive: true });
    fs.writeFileSync(path.join(top, 'sub', 'deeper', 'c'), 'c');
    fs.symlinkSync(outside, path.join(top, 'sub', 'link'));
    fs.chownSync(path.join(top, 'sub'), NOBODY.uid, NOBODY.gid);
    fs.chownSync(path.join(top, 'sub', 'deeper'), NOBODY.uid, NOBODY.gid);
    expect(await server.request('fs/remove', { path: top, recursive: true, force: false })).toEqual({});
    expect(fs.existsSync(top)).toBe(false);
    expect(fs.readdirSync(outside)).toEqual(['kept']);
  });
});

describe('fs/remove, recursive, in a tree that is not what its paths say', () => {
  // As root: these trees are the test's own.
  let root: ServerProcess;
  beforeAll(async () => {
    root = await ServerProcess.started();
  });
  afterAll(() => root.dispose());
  it('removes names that are not UTF-8, and never reaches through the name they would decode to', async () => {
    const outside = tree('outside-names', ['kept']);
    const top = Buffer.from(tree('bytes', []));
    const at = (...names: string[]) => Buffer.concat([top, ...names.map((name) => Buffer.from(`/${name}`, 'latin1'))]);
    fs.writeFileSync(at('ok'), 'x');
    fs.writeFileSync(at('bad\xff'), 'x');
    fs.mkdirSync(at('dir\xfe'));
    fs.writeFileSync(at('dir\xfe', 'inner'), 'x');
    // `x\xff` read as UTF-8 is `x\uFFFD`, whose UTF-8 is the name of a symlink out of the tree.
    fs.mkdirSync(at('x\xff'));
    fs.symlinkSync(outside, Buffer.concat([top, Buffer.from('/x\uFFFD')]));
    expect(await root.request('fs/remove', { path: top.toString(), recursive: true, force: false })).toEqual({});
    expect(fs.existsSync(top)).toBe(false);
    expect(fs.readdirSync(outside)).toEqual(['kept']);
  });

  it('removes a tree deeper than PATH_MAX', async () => {
    const top = tree('deep', []);
    // Built from each open directory down, as no path to the bottom fits in PATH_MAX.
    let parent = fs.openSync(top, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    for (let level = 0; level < 2100; level++) {
      fs.mkdirSync(`/proc/self/fd/${parent}/level`);
      const child = fs.openSync(`/proc/self/fd/${parent}/level`, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
      fs.closeSync(parent);
      parent = child;
    }
    fs.closeSync(parent);
    expect(await root.request('fs/remove', { path: top, recursive: true, force: false })).toEqual({});
    expect(fs.existsSync(top)).toBe(false);
  });

  it('does not follow a directory swapped for a symlink while its siblings are removed', async () => {
    const outside = tree('outside-swap', ['precious']);
    const top = tree('swapped', []);
    fs.mkdirSync(path.join(top, 'first'));
    fs.mkdirSync(path.join(top, 'second'));
    // The directory removed first is the one listed first; the other is swapped once that one is under way.
    const [first, second] = await listed(top);
    const many = path.join(top, first!);
    for (let i = 0; i < 4000; i++) fs.writeFileSync(path.join(many, `f${i}`), '');
    fs.writeFileSync(path.join(top, second!, 'inside'), '');
    const early = (await listed(many))[50]!;
    let settled = false;
    const removal = root.request('fs/remove', { path: top, recursive: true, force: false }).finally(() => {
      settled = true;
    });
    while (!settled && fs.existsSync(path.join(many, early))) await new Promise((resolve) => setImmediate(resolve));
    try {
      fs.renameSync(path.join(top, second!), path.join(dir, 'second-saved'));
      fs.symlinkSync(outside, path.join(top, second!));
    } catch (error) {
      // Removed already (a stalled test process): nothing was swapped, and nothing is to be shown.
      if ((error as { code?: string }).code !== 'ENOENT') throw error;
    }
    expect(await removal).toEqual({});
    expect(fs.readdirSync(outside)).toEqual(['precious']);
  });

  it('lets two servers remove one tree at once, both succeeding: what the other removed is not an error', async () => {
    const top = tree('twice', []);
    // Large enough that neither server is done before the other has begun, even on a loaded machine.
    for (let i = 0; i < 100; i++) {
      fs.mkdirSync(path.join(top, `d${i}`));
      for (let j = 0; j < 40; j++) fs.writeFileSync(path.join(top, `d${i}`, `f${j}`), '');
    }
    // Two servers: one server takes a connection's fs requests in order, and the second would find nothing.
    const other = await ServerProcess.started();
    try {
      const removal = (by: ServerProcess) => by.request('fs/remove', { path: top, recursive: true, force: false });
      expect(await Promise.all([removal(root), removal(other)])).toEqual([{}, {}]);
    } finally {
      await other.dispose();
    }
    expect(fs.existsSync(top)).toBe(false);
  });
});
