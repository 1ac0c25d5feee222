/**
 * A recursive `fs/remove` that fails part-way, run as an unprivileged user:
 * the answers and what is left behind are those of both references (Codex
 * 0.134 and 0.169, compared by hand: `src/server/fs/remove-tree.ts`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
