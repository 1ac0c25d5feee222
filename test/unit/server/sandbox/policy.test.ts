import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bwrapArgs } from '../../../../src/server/sandbox/bwrap.js';
import { likelySandboxDenied } from '../../../../src/server/sandbox/denial.js';
import { serverCode } from '../../../../src/package/files.js';
import { confinementOf } from '../../../../src/server/sandbox/policy.js';
import { managedPolicy, special } from '../../../support/sandbox-policy.js';

const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'policy-unit-'));
fs.mkdirSync(path.join(workspace, '.git'));
// Not empty: an empty protected directory is taken for a stand-in (`protected-paths.ts`).
fs.writeFileSync(path.join(workspace, '.git', 'HEAD'), 'ref: refs/heads/main\n');
const policy = (entries: object[], network: unknown = 'restricted') => managedPolicy(workspace, entries, network);
const externalPolicy = (network: string) => ({ permissions: { type: 'external', network }, windowsSandboxLevel: 'disabled' });

describe('confinementOf', () => {
  it('confines nothing for null, absent, disabled, and external with the network enabled (the sandbox the server itself runs in)', () => {
    const disabled = { permissions: { type: 'disabled' }, windowsSandboxLevel: 'disabled' };
    for (const sandbox of [undefined, null, disabled, externalPolicy('enabled')]) expect(confinementOf(sandbox, undefined)).toBeUndefined();
  });

  it('looks for bwrap only for a policy that restricts the file system (most calls carry none)', () => {
    let lookups = 0;
    const findBwrap = () => {
      lookups++;
      return undefined;
    };
    const disabled = { permissions: { type: 'disabled' }, windowsSandboxLevel: 'disabled' };
    for (const sandbox of [undefined, null, disabled, externalPolicy('enabled'), externalPolicy('restricted')])
      confinementOf(sandbox, undefined, findBwrap);
    expect(lookups).toBe(0);
    confinementOf(policy([special('root', 'read')]), undefined, findBwrap);
    expect(lookups).toBe(1);
  });

  it('cuts a restricted network under external, the file system left as it is, as the reference does', () => {
    expect(confinementOf(externalPolicy('restricted'), undefined)).toEqual({
      writable: ['/'],
      readOnly: [],
      synthetic: [],
      noNetwork: true,
    });
  });

  it('takes the project roots from workspaceRoots only: without any, not even cwd is writable, as in the reference', () => {
    const entries = [special('root', 'read'), special('project_roots', 'write')];
    const { workspaceRoots: _roots, ...withoutRoots } = policy(entries);
    for (const sandbox of [withoutRoots, { ...withoutRoots, workspaceRoots: [] }])
      expect(confinementOf(sandbox, undefined)).toMatchObject({ writable: [], readOnly: [], synthetic: [] });
    expect(() => confinementOf({ ...withoutRoots, workspaceRoots: [`${workspace}/../elsewhere`] }, undefined)).toThrow(/elsewhere/);
    expect(() => confinementOf({ ...withoutRoots, workspaceRoots: ['relative/root'] }, undefined)).toThrow(/invalid URI/);
  });

  it("takes serde's map form of the network, and words other shapes as its parser", () => {
    expect(confinementOf(policy([special('root', 'read')], { restricted: null }), undefined)).toMatchObject({ noNetwork: true });
    expect(confinementOf(policy([special('root', 'read')], { enabled: {} }), undefined)).toMatchObject({ noNetwork: false });
    const external = (network: unknown) => () =>
      confinementOf({ permissions: { type: 'external', network }, windowsSandboxLevel: 'disabled' }, undefined);
    expect(external(null)).toThrow(/^invalid type: null, expected string or map$/);
    expect(external(5)).toThrow(/^invalid type: integer `5`, expected string or map$/);
    expect(external([])).toThrow(/^invalid type: sequence, expected string or map$/);
    expect(external({ bogus: null })).toThrow(/^unknown variant `bogus`, expected `restricted` or `enabled`$/);
    expect(external({ restricted: null, enabled: null })).toThrow(/^invalid value: map, expected map with a single key$/);
    expect(external({ restricted: 5 })).toThrow(/^invalid type: integer `5`, expected unit$/);
  });

  it("words a missing or unknown network as the reference's parser, whatever the type", () => {
    expect(() => confinementOf({ permissions: { type: 'external' }, windowsSandboxLevel: 'disabled' }, undefined)).toThrow(
      /^missing field `network`$/,
    );
    expect(() => confinementOf(policy([special('root', 'read')], 'proxied'), undefined)).toThrow(
      /^unknown variant `proxied`, expected `restricted` or `enabled`$/,
    );
  });

  it("reads Codex's workspace-write policy", () => {
    const confinement = confinementOf(
      policy([
        special('root', 'read'),
        special('project_roots', 'write'),
        special('slash_tmp', 'write'),
        special('tmpdir', 'write'),
        { ...special('project_roots', 'read', { subpath: '.git' }), missing_path_behavior: 'skip' },
        { ...special('project_roots', 'read', { subpath: '.aws' }), missing_path_behavior: 'skip' },
      ]),
      '/var/tmp',
    );
    expect(confinement).toMatchObject({ writable: [workspace, '/tmp', '/var/tmp'], noNetwork: true });
    // Beside this server's code, wherever /tmp reaches it (a clone under /tmp).
    expect(confinement?.readOnly.filter((candidate) => !serverCode().includes(candidate))).toEqual([path.join(workspace, '.git')]);
    // The protected names that are missing get stand-ins, under every writable root.
    const standIns = ['.codex', '.agents', '.aws'].map((name) => path.join(workspace, name));
    expect(confinement?.synthetic).toEqual(expect.arrayContaining(standIns));
  });

  it('refuses a writable root that holds bwrap, perl or node, which the server runs outside the sandbox', () => {
    const bin = path.join(workspace, 'bin');
    fs.mkdirSync(bin, { recursive: true });
    const bwrap = path.join(bin, 'bwrap');
    fs.writeFileSync(bwrap, '');
    const writing = (root: string) => ({ ...policy([special('root', 'read'), special('project_roots', 'write')]), workspaceRoots: [root] });
    expect(() => confinementOf(writing(workspace), undefined, () => bwrap)).toThrow(
      `sandbox is not supported: the writable ${workspace}, which holds ${fs.realpathSync(bwrap)}, a program this server runs outside the sandbox`,
    );
    expect(() => confinementOf(writing(bin), undefined, () => bwrap)).toThrow(/which holds .*bwrap/);
    expect(confinementOf(writing(workspace), undefined, () => '/usr/bin/bwrap')).toBeDefined(); // another bwrap: nothing here to replace
    for (const program of [process.execPath, '/usr/bin/perl'].filter((candidate) => fs.existsSync(candidate)))
      expect(() => confinementOf(writing(path.dirname(program)), undefined)).toThrow(/a program this server runs outside the sandbox/);
    expect(() => confinementOf(policy([special('root', 'read'), special('root', 'write')]), undefined)).toThrow(
      /the writable \/, which holds/,
    );
    // The whole file system writable with only the network cut, as the reference allows it.
    const unrestricted = { permissions: { type: 'managed', file_system: { type: 'unrestricted' }, network: 'restricted' } };
    expect(confinementOf({ ...unrestricted, windowsSandboxLevel: 'disabled' }, undefined, () => bwrap)).toMatchObject({ writable: ['/'] });
  });

  it('refuses a writable root that holds a symlink on the way to bwrap (a child could point it elsewhere)', () => {
    const links = path.join(workspace, 'links');
    fs.mkdirSync(links, { recursive: true });
    const link = path.join(links, 'bwrap');
    fs.rmSync(link, { force: true });
    fs.symlinkSync('/usr/bin/bwrap', link);
    const writing = { ...policy([special('root', 'read'), special('project_roots', 'write')]), workspaceRoots: [links] };
    expect(() => confinementOf(writing, undefined, () => link)).toThrow(
      `which holds ${link}, on the way to ${link}, a program this server runs`,
    );
    fs.rmSync(link);
  });

  it('follows `..` after a symlink from where the link led, as the kernel does, to the program at the end', () => {
    // e/bwrap -> sub/../bwrap2, e/sub -> W/inner: the file run is W/bwrap2 (text alone would say e/bwrap2).
    const [e, writable] = [path.join(workspace, 'e'), path.join(workspace, 'W')];
    fs.mkdirSync(path.join(writable, 'inner'), { recursive: true });
    fs.mkdirSync(e, { recursive: true });
    fs.writeFileSync(path.join(writable, 'bwrap2'), '', { mode: 0o755 });
    for (const link of ['bwrap', 'sub']) fs.rmSync(path.join(e, link), { force: true });
    fs.symlinkSync('sub/../bwrap2', path.join(e, 'bwrap'));
    fs.symlinkSync(path.join(writable, 'inner'), path.join(e, 'sub'));
    const writing = { ...policy([special('root', 'read'), special('project_roots', 'write')]), workspaceRoots: [writable] };
    expect(() => confinementOf(writing, undefined, () => path.join(e, 'bwrap'))).toThrow(/which holds .*W\/bwrap2/);
  });

  it("refuses a writable root that holds the host programs' libraries or the loader's files in /etc", () => {
    const libc = fs
      .readFileSync('/proc/self/maps', 'latin1')
      .split('\n')
      .map((line) => line.split(/\s+/)[5] ?? '')
      .find((file) => /\/libc\.so/.test(file));
    const writing = (root: string) => ({ ...policy([special('root', 'read'), special('project_roots', 'write')]), workspaceRoots: [root] });
    if (libc) expect(() => confinementOf(writing(path.dirname(libc)), undefined)).toThrow(/load their libraries from/);
    expect(() => confinementOf(writing('/etc'), undefined)).toThrow(/which holds \/etc\/ld\.so\.\S+, where programs this server runs/);
  });

  it("makes nothing writable for a relative TMPDIR (resolved, it would be the server's cwd)", () => {
    for (const tmpdir of ['.', 'tmp', ''])
      expect(confinementOf(policy([special('root', 'read'), special('tmpdir', 'write')]), tmpdir)?.writable).toEqual([]);
  });

  it("keeps the server's own code read-only where a writable root reaches it, so that a child cannot rewrite it", () => {
    const root = path.resolve(fileURLToPath(import.meta.url), '../../../../..');
    const code = serverCode();
    expect(code).toEqual(
      expect.arrayContaining([fs.realpathSync(path.join(root, 'dist')), fs.realpathSync(path.join(root, 'node_modules/undici'))]),
    );
    const entries = [special('root', 'read'), special('project_roots', 'write')];
    for (const writableRoot of [root, path.join(root, 'node_modules')]) {
      const confinement = confinementOf({ ...policy(entries), workspaceRoots: [pathToFileURL(writableRoot).href] }, undefined);
      const reached = code.filter((candidate) => candidate.startsWith(fs.realpathSync(writableRoot)));
      expect(reached.length).toBeGreaterThan(0);
      expect(confinement?.readOnly).toEqual(expect.arrayContaining(reached));
    }
    // Out of reach of every writable root: nothing to bind.
    expect(confinementOf(policy(entries), undefined)?.readOnly).toEqual([path.join(workspace, '.git')]);
  });

  it('keeps .git, .codex, .agents and .aws read-only under every writable root, listed or not', () => {
    fs.mkdirSync(path.join(workspace, '.codex'), { recursive: true });
    fs.writeFileSync(path.join(workspace, '.codex', 'config.toml'), '');
    try {
      const confinement = confinementOf(policy([special('root', 'read'), special('project_roots', 'write')]), undefined);
      expect(confinement?.readOnly).toEqual([path.join(workspace, '.git'), path.join(workspace, '.codex')]);
    } finally {
      fs.rmSync(path.join(workspace, '.codex'), { recursive: true });
    }
  });

  it('stands in for a missing read-only path at its first missing component, inside a writable root only', () => {
    const sandbox = policy([
      special('root', 'read'),
      special('project_roots', 'write'),
      { path: { type: 'path', path: `${workspace}/deep/er` }, access: 'read' },
      { path: { type: 'path', path: '/nonexistent-dir/x' }, access: 'read' },
    ]);
    const confinement = confinementOf(sandbox, undefined);
    expect(confinement?.synthetic).toContain(path.join(workspace, 'deep'));
    expect(confinement?.synthetic).not.toContain('/nonexistent-dir');
    expect(confinement?.readOnly).toEqual([path.join(workspace, '.git')]);
  });

  it('takes a single file as a writable root, with nothing protected under it', () => {
    const file = path.join(workspace, 'notes.txt');
    fs.writeFileSync(file, '');
    const sandbox = policy([special('root', 'read'), { path: { type: 'path', path: file }, access: 'write' }]);
    expect(confinementOf(sandbox, undefined)).toMatchObject({ writable: [file], readOnly: [], synthetic: [] });
  });

  it('takes plain paths, native or as URIs, and refuses relative ones', () => {
    const sandbox = policy([
      special('root', 'read'),
      { path: { type: 'path', path: workspace }, access: 'write' },
      { path: { type: 'path', path: `file://${workspace}/.git` }, access: 'read' },
    ]);
    expect(confinementOf(sandbox, undefined)).toMatchObject({
      writable: [workspace],
      readOnly: [path.join(workspace, '.git')],
      noNetwork: true,
    });
    expect(() =>
      confinementOf(policy([special('root', 'read'), { path: { type: 'path', path: 'rel' }, access: 'write' }]), undefined),
    ).toThrow(/the path "rel"/);
  });

  it('leaves an unrestricted file system writable, and confines only a restricted network', () => {
    const unrestricted = (network: string) => ({
      permissions: { type: 'managed', file_system: { type: 'unrestricted' }, network },
      windowsSandboxLevel: 'disabled',
    });
    expect(confinementOf(unrestricted('restricted'), undefined)).toEqual({ writable: ['/'], readOnly: [], synthetic: [], noNetwork: true });
    expect(confinementOf(unrestricted('enabled'), undefined)).toBeUndefined();
    const args = bwrapArgs({ writable: ['/'], readOnly: [], synthetic: [], noNetwork: true }, '/tmp', false);
    expect(args.slice(args.indexOf('--bind'), args.indexOf('--bind') + 3)).toEqual(['--bind', '/', '/']);
    expect(args.join(' ')).not.toContain('--ro-bind / /');
    expect(args).toContain('--unshare-net');
  });

  it('keeps the network with "enabled"', () => {
    const sandbox = policy([special('root', 'read'), special('project_roots', 'write')], 'enabled');
    expect(confinementOf(sandbox, undefined)).toMatchObject({
      writable: [workspace],
      readOnly: [path.join(workspace, '.git')],
      noNetwork: false,
    });
  });

  it.each([
    ['an unknown permissions type', { permissions: { type: 'remote' }, windowsSandboxLevel: 'disabled' }, /unknown variant `remote`/],
    ['an unknown special path', policy([special('root', 'read'), special('home', 'write')]), /path .*home/],
    ['an unknown access', policy([special('root', 'read'), special('project_roots', 'none')]), /access "none"/],
    ['a subpath with ..', policy([special('root', 'read'), special('project_roots', 'write', { subpath: '../x' })]), /subpath/],
    ['no read access to the root', policy([special('project_roots', 'write')]), /root/],
    [
      'an unknown entry member',
      policy([special('root', 'read'), { ...special('project_roots', 'write'), deny: true }]),
      /entry member "deny"/,
    ],
    [
      'an unknown path member',
      policy([special('root', 'read'), { path: { type: 'path', path: '/x', glob: '*' }, access: 'write' }]),
      /entry path member "glob"/,
    ],
    [
      'an unknown special member',
      policy([special('root', 'read'), special('project_roots', 'write', { except: '.env' })]),
      /special path member "except"/,
    ],
  ])('refuses %s', (_what, sandbox, message) => {
    expect(() => confinementOf(sandbox, undefined)).toThrow(message);
  });
});

describe('likelySandboxDenied', () => {
  it.each([
    [0, 'Read-only file system', false],
    [1, 'touch: cannot touch x: Read-only file system', true],
    [1, 'Operation not permitted', true],
    [1, 'plain failure', false],
    [127, 'command not found', false],
    [126, 'Permission denied', true],
    [159, '', true],
  ])('exit %i with %j: %s', (code, output, expected) => {
    expect(likelySandboxDenied(code, output)).toBe(expected);
  });
});
