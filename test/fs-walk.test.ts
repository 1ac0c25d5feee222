/**
 * fs/walk (generation 2): our answers, and the same requests to Codex
 * 0.169.0's exec-server when it is installed (normalized answers equal).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Contestant, contestants, hasReference, normalize, referenceSkipReason } from './support/differential.js';

let root: string;
let servers: Contestant[];
const uri = (native: string) => pathToFileURL(native).href;

beforeAll(async () => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'walk-')));
  const file = (relative: string, text = 'x') => {
    fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true });
    fs.writeFileSync(path.join(root, relative), text);
  };
  for (const name of [
    'a.txt',
    'B.txt',
    '.hidden.txt',
    '.hdir/in-hidden.txt',
    'dir/sub/b.txt',
    'dir/c.txt',
    'zdir/z.txt',
    'sp ace#%?ü.txt',
    'e/f/g/h/deep.txt',
  ]) {
    file(name);
  }
  fs.mkdirSync(path.join(root, 'empty'));
  fs.symlinkSync('a.txt', path.join(root, 'link-to-file'));
  fs.symlinkSync('zdir', path.join(root, 'alink'));
  fs.symlinkSync('nowhere', path.join(root, 'dangling'));
  fs.symlinkSync('loop2', path.join(root, 'loop1'));
  fs.symlinkSync('loop1', path.join(root, 'loop2'));
  fs.symlinkSync('..', path.join(root, 'dir/up'));
  execFileSync('mkfifo', [path.join(root, 'fifo')]);
  file('counted/b.txt');
  execFileSync('mkfifo', [path.join(root, 'counted/a-fifo')]);
  fs.symlinkSync('nowhere', path.join(root, 'counted/0-dangling'));
  // Beside the tree: entries the walk cannot look up (names that are not UTF-8) and ones it lists.
  fs.mkdirSync(`${root}-errs`);
  for (const name of ['bad1\xff', 'bad2\xff', 'bad3\xff']) fs.writeFileSync(Buffer.from(`${root}-errs/${name}`, 'latin1'), 'x');
  fs.symlinkSync('nowhere', `${root}-errs/dangling`);
  fs.writeFileSync(`${root}-errs/zfile`, 'x');
  servers = await contestants();
});

afterAll(async () => {
  await Promise.all(servers.map((contestant) => contestant.dispose()));
  fs.rmSync(root, { recursive: true, force: true });
  fs.rmSync(`${root}-errs`, { recursive: true, force: true });
});

const options = (overrides: Record<string, unknown> = {}) => ({
  maxDepth: 10,
  maxDirectories: 100,
  maxEntries: 100,
  followDirectorySymlinks: false,
  ...overrides,
});

/** One request to every contestant; the answers, normalized. */
async function ask(params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const answers: Record<string, unknown> = {};
  for (const { name, server } of servers) {
    const response = await server.call('fs/walk', params);
    answers[name] = normalize(response.error ?? response.result, root);
  }
  return answers;
}

const CASES: Array<[string, Record<string, unknown>]> = [
  ['the whole tree', { options: options() }],
  ['following directory symlinks', { options: options({ followDirectorySymlinks: true }) }],
  ['pruning hidden directories', { options: options({ pruneHiddenDirectories: true }) }],
  ['maxDepth 0', { options: options({ maxDepth: 0 }) }],
  ['maxDepth 1', { options: options({ maxDepth: 1 }) }],
  // Every count up to past the whole tree: entries met but not listed count too.
  ...Array.from({ length: 24 }, (_, index): [string, Record<string, unknown>] => [
    `maxEntries ${index + 1}`,
    { options: options({ maxEntries: index + 1, followDirectorySymlinks: index % 2 === 0 }) },
  ]),
  ['maxDirectories 2', { options: options({ maxDirectories: 2 }) }],
  ['maxDepth 0 with maxDirectories 1', { options: options({ maxDepth: 0, maxDirectories: 1 }) }],
  ['limits of zero', { options: options({ maxEntries: 0 }) }],
  ['limits over the maximums', { options: options({ maxDepth: 65 }) }],
  ['a file as the root', { path: 'a.txt', options: options() }],
  ['a missing root', { path: 'missing', options: options() }],
  ['a symlink loop as the root', { path: 'loop1', options: options() }],
  ['a root under a file', { path: 'a.txt/x', options: options() }],
  ['a symlinked root, not followed', { path: 'alink', options: options() }],
  ['a symlinked root, followed', { path: 'alink', options: options({ followDirectorySymlinks: true }) }],
];

describe('fs/walk', () => {
  it.each(CASES)('%s', async (_name, { path: relative, ...rest }) => {
    const answers = await ask({ path: uri(path.join(root, (relative as string | undefined) ?? '')), ...rest });
    if (hasReference) expect(answers.ours).toEqual(answers.reference);
    expect(answers.ours).toBeDefined();
  });

  // Left out (as in every case above) it is taken.
  it('refuses a null pruneHiddenDirectories, as the reference', async () => {
    for (const { server } of servers) {
      const { error } = await server.call('fs/walk', { path: uri(root), options: options({ pruneHiddenDirectories: null }) });
      // Our text names the field first.
      expect(error.message.replace(/^options\.pruneHiddenDirectories: /, '')).toBe('invalid type: null, expected a boolean');
    }
  });

  it('lists breadth-first, names sorted bytewise, only files and directories, never the root', async () => {
    const { ours } = await ask({ path: uri(root), options: options({ maxDepth: 1 }) });
    const result = ours as { entries: Array<{ path: string; kind: string }>; truncated: boolean; errors: unknown[] };
    expect(result.entries.slice(0, 13).map((entry) => entry.path)).toEqual([
      'file://R/.hdir',
      'file://R/.hidden.txt',
      'file://R/B.txt',
      'file://R/a.txt',
      'file://R/counted',
      'file://R/dir',
      'file://R/e',
      'file://R/empty',
      'file://R/sp%20ace%23%25%3F%C3%BC.txt',
      'file://R/zdir',
      'file://R/.hdir/in-hidden.txt',
      'file://R/counted/b.txt',
      'file://R/dir/c.txt',
    ]);
    expect(result).toMatchObject({ truncated: false, errors: [] });
  });

  it('says truncated only when a limit on entries or directories cut the walk', async () => {
    const entries = (await ask({ path: uri(root), options: options({ maxEntries: 2 }) })).ours;
    expect(entries).toMatchObject({ truncated: true, entries: [{ path: 'file://R/.hdir' }, { path: 'file://R/.hidden.txt' }] });
    expect((await ask({ path: uri(root), options: options({ maxDepth: 0 }) })).ours).toMatchObject({ truncated: false });
    expect((await ask({ path: uri(root), options: options({ maxDirectories: 1 }) })).ours).toMatchObject({ truncated: true });
  });

  it('counts a FIFO against maxEntries without listing it, and a dangling link not at all', async () => {
    const counted = uri(path.join(root, 'counted'));
    expect((await ask({ path: counted, options: options({ maxEntries: 1 }) })).ours).toEqual({ entries: [], errors: [], truncated: true });
    expect((await ask({ path: counted, options: options({ maxEntries: 2 }) })).ours).toEqual({
      entries: [{ path: 'file://R/counted/b.txt', kind: 'file' }],
      errors: [],
      truncated: false,
    });
  });

  it.each([1, 2, 3, 4, 5])('counts an entry it cannot look up against maxEntries %i, as an entry', async (maxEntries) => {
    const answers = await ask({ path: uri(`${root}-errs`), options: options({ maxEntries }) });
    if (hasReference) expect(answers.ours).toEqual(answers.reference);
    const { entries, errors, truncated } = answers.ours as { entries: unknown[]; errors: unknown[]; truncated: boolean };
    expect(entries.length + errors.length).toBe(Math.min(maxEntries, 4));
    expect(truncated).toBe(maxEntries < 4);
  });

  it('refuses bad limits before looking at the path, with the reference texts', async () => {
    const missing = uri(path.join(root, 'missing'));
    expect((await ask({ path: missing, options: options({ maxDirectories: 0 }) })).ours).toEqual({
      code: -32600,
      message: 'filesystem walk limits must be greater than zero',
    });
    expect((await ask({ path: missing, options: options({ maxEntries: 50_001 }) })).ours).toEqual({
      code: -32600,
      message: 'filesystem walk limits exceed maximums: depth=64, directories=10000, entries=50000',
    });
  });

  it.skipIf(!hasReference)('matches the reference (skipped without it)', () => {
    expect(servers.map((contestant) => contestant.name)).toEqual(['ours', 'reference']);
  });
  if (!hasReference) it.skip(referenceSkipReason, () => undefined);
});
