/** bwrap's arguments for a confinement (mount order, environment) and the server code's protection. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bwrapArgs, findBwrap, splitEnvironment } from '../../../../src/server/sandbox/bwrap.js';
import { protectReadOnly } from '../../../../src/server/sandbox/protected-paths.js';

const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'bwrap-unit-'));
fs.mkdirSync(path.join(workspace, '.git'));
fs.writeFileSync(path.join(workspace, '.git', 'HEAD'), 'ref: refs/heads/main\n');
afterAll(() => fs.rmSync(workspace, { recursive: true, force: true }));

describe('bwrapArgs', () => {
  it('binds the root read-only first, writable paths over it, read-only subpaths last, and skips missing ones', () => {
    const standIn = path.join(workspace, '.codex');
    const args = bwrapArgs(
      { writable: [workspace, '/nonexistent-dir'], readOnly: [path.join(workspace, '.git')], synthetic: [standIn], noNetwork: true },
      workspace,
      false,
      { LD_PRELOAD: '/lib/x.so' },
    );
    const real = fs.realpathSync(workspace);
    const isolation = '--die-with-parent --unshare-user-try --cap-drop ALL --unshare-pid --unshare-ipc --unshare-uts';
    // The machine-wide parts of /proc this kernel has, read-only over the fresh /proc.
    const procCovers = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger']
      .filter((part) => fs.existsSync(part))
      .map((part) => `--ro-bind ${part} ${part} `)
      .join('');
    expect(procCovers).toContain('--ro-bind /proc/sys /proc/sys');
    expect(args.join(' ')).toBe(
      `${isolation} --ro-bind / / --dev /dev --proc /proc ${procCovers}--new-session --unshare-net --bind ${real} ${real} ` +
        `--ro-bind ${real}/.git ${real}/.git --perms 0555 --tmpfs ${standIn} --remount-ro ${standIn} ` +
        `--setenv LD_PRELOAD /lib/x.so --chdir ${workspace} --`,
    );
    expect(bwrapArgs({ writable: [], readOnly: [], synthetic: [], noNetwork: false }, '/', true)).not.toContain('--new-session');
  });
});

describe('protectReadOnly: the server code', () => {
  it('keeps a writable root inside the code read-only (mounted deeper, it would win over the code)', () => {
    const code = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'code-')));
    const inside = path.join(code, 'sub');
    fs.mkdirSync(inside);
    try {
      expect(protectReadOnly([inside], [], [code]).readOnly).toEqual(expect.arrayContaining([code, inside]));
    } finally {
      fs.rmSync(code, { recursive: true });
    }
  });
});

describe('bwrapArgs: the most specific path wins', () => {
  it('mounts shallower paths first, whatever their kind, and for one path the read-only mount last', () => {
    const inner = path.join(workspace, 'outer', 'inner');
    fs.mkdirSync(inner, { recursive: true });
    const [outerReal, innerReal] = [path.dirname(inner), inner].map((dir) => fs.realpathSync(dir));
    const args = bwrapArgs(
      { writable: [inner, workspace], readOnly: [path.dirname(inner), workspace], synthetic: [], pinned: [outerReal], noNetwork: false },
      '/',
      false,
    ).join(' ');
    const real = fs.realpathSync(workspace);
    expect(args).toContain(
      `--bind ${real} ${real} --ro-bind ${real} ${real} --bind ${outerReal} ${outerReal} --ro-bind ${outerReal} ${outerReal} --bind ${innerReal} ${innerReal} --chdir`,
    );
  });
});

describe('splitEnvironment', () => {
  it("carries ordinary variables in bwrap's environment and keeps those glibc acts on at start for inside", () => {
    const { carried, setInside } = splitEnvironment({
      PATH: '/bin',
      OPENAI_API_KEY: 'sk-x',
      ['__proto__']: 'p',
      LD_PRELOAD: '/evil.so',
      LD_AUDIT: '/a.so',
      GCONV_PATH: '/g',
      GLIBC_TUNABLES: 'x',
      MALLOC_CHECK_: '3',
      TMPDIR: '/t',
      UNSET: undefined,
    });
    expect(Object.entries(carried)).toEqual([
      ['PATH', '/bin'],
      ['OPENAI_API_KEY', 'sk-x'],
      ['__proto__', 'p'],
    ]);
    expect(Object.keys(setInside)).toEqual(['LD_PRELOAD', 'LD_AUDIT', 'GCONV_PATH', 'GLIBC_TUNABLES', 'MALLOC_CHECK_', 'TMPDIR']);
  });
});

describe('protectReadOnly: pins', () => {
  it('keeps a pin whose deepest mount is writable, though a read-only path lies above it', () => {
    // A read-only, A/B writable (a project root), the code at A/B/C/dist: A/B/C must not be renamed.
    const a = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'pins-')));
    try {
      const [b, c] = [path.join(a, 'B'), path.join(a, 'B', 'C')];
      fs.mkdirSync(path.join(c, 'dist'), { recursive: true });
      const { pinned } = protectReadOnly([b, path.dirname(a)], [a], [path.join(c, 'dist')]);
      expect(pinned).toContain(c);
      expect(pinned).not.toContain(a); // under the read-only A, nothing writable
    } finally {
      fs.rmSync(a, { recursive: true, force: true });
    }
  });
});

describe('findBwrap', () => {
  it('gives the real path of what it finds: a relative one would be run from the child cwd', () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'find-bwrap-')));
    const saved = process.cwd();
    try {
      fs.mkdirSync(path.join(dir, 'bin'));
      fs.writeFileSync(path.join(dir, 'bin', 'real-bwrap'), '', { mode: 0o755 });
      fs.symlinkSync('real-bwrap', path.join(dir, 'bin', 'bwrap'));
      process.chdir(dir);
      expect(findBwrap('bin/bwrap')).toBe(path.join(dir, 'bin', 'real-bwrap'));
      expect(findBwrap(undefined, 'bin')).toBe(path.join(dir, 'bin', 'real-bwrap'));
    } finally {
      process.chdir(saved);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
