/**
 * A confined child must leave the host as its policy says, for this start
 * and for the ones after it: no machine-wide kernel setting written (a server
 * running as root stays uid 0 inside), no link planted for a later policy's
 * writable path to follow, no read-only path moved aside with its directory.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findBwrap } from '../src/server/sandbox/bwrap.js';
import { entriesOnceReleased, managedPolicy, sandboxFixture, special } from './support/sandbox-policy.js';
import { b64, BASE_ENV } from './support/server-process.js';

const hasBwrap = findBwrap(undefined) !== undefined;
const isRoot = process.getuid?.() === 0;
const SYSCTL = '/proc/sys/kernel/printk_ratelimit';
const fixture = sandboxFixture('host-state');
const { freshWorkspace } = fixture;

const pathEntry = (native: string, access: string) => ({ path: { type: 'path', path: pathToFileURL(native).href }, access });

/** Runs `script` under `sandbox` in `workspace`: its output, or the error of a refused start. */
async function confined(workspace: string, sandbox: object, script: string): Promise<string> {
  const processId = `host${fixture.next()}`;
  const params = { processId, argv: ['sh', '-c', script], cwd: pathToFileURL(workspace).href, env: BASE_ENV, tty: false, sandbox };
  const answer = await fixture.server.call('process/start', params);
  if (answer.error) return `refused: ${answer.error.message}`;
  await fixture.server.waitClosed(processId);
  return fixture.server.output(processId).toString();
}

describe.skipIf(!hasBwrap)("the host's state across confined starts (bwrap)", () => {
  it("mounts the machine-wide parts of /proc read-only, so that even uid 0 inside cannot change the kernel's settings", async () => {
    const workspace = freshWorkspace();
    const readOnlyRoot = managedPolicy(workspace, [special('root', 'read')]);
    const before = fs.readFileSync(SYSCTL, 'utf8');
    // The value it holds is written back: were the write to go through, nothing would change.
    const parts = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'].filter((part) => fs.existsSync(part));
    const output = await confined(
      workspace,
      readOnlyRoot,
      `awk '{ print $5, substr($6, 1, 3) }' /proc/self/mountinfo; printf '%s' '${before.trim()}' > ${SYSCTL} && echo WROTE`,
    );
    const mounts = output.split('\n').filter((line) => parts.includes(line.split(' ')[0]!));
    // Each is a mount point, and the last mount over it (the one that counts) is read-only.
    for (const part of parts) expect(mounts.findLast((line) => line.startsWith(`${part} `))).toBe(`${part} ro,`);
    expect(output).not.toContain('WROTE');
    const written = await fixture.server.call('fs/writeFile', {
      path: pathToFileURL(SYSCTL).href,
      dataBase64: b64(before),
      sandbox: readOnlyRoot,
    });
    // As root the mount refuses the write; otherwise the file's mode already does.
    expect(written.error?.message).toBe(isRoot ? 'Read-only file system (os error 30)' : 'Permission denied (os error 13)');
    expect(fs.readFileSync(SYSCTL, 'utf8')).toBe(before);
  });

  it("refuses a writable path reached through a link a child planted in another writable root, and mounts nothing at the link's target", async () => {
    const workspace = freshWorkspace();
    const victim = path.join(freshWorkspace(), 'victim.txt');
    fs.writeFileSync(victim, 'original');
    const out = path.join(workspace, 'out');
    const policy = managedPolicy(workspace, [special('root', 'read'), special('project_roots', 'write'), pathEntry(out, 'write')]);
    // The first start may write the workspace: `out` does not exist yet, so it plants a link there.
    expect(await confined(workspace, policy, `ln -s ${victim} out && echo planted`)).toBe('planted\n');
    const second = await confined(workspace, policy, `echo changed > ${victim}; echo ran`);
    expect(second).toBe(
      `refused: sandbox is not supported: the writable path ${out}, which crosses the writable symlink ${out}; this exec-server cannot enforce it`,
    );
    const write = await fixture.server.call('fs/writeFile', {
      path: pathToFileURL(victim).href,
      dataBase64: b64('changed'),
      sandbox: policy,
    });
    expect(write.error?.code).toBe(-32602);
    expect(fs.readFileSync(victim, 'utf8')).toBe('original');
  });

  it('keeps read-only paths deep in a writable root where they are: the directories above them cannot be renamed', async () => {
    const workspace = freshWorkspace();
    fs.mkdirSync(path.join(workspace, 'sub', 'prot'), { recursive: true });
    fs.writeFileSync(path.join(workspace, 'sub', 'prot', 'config'), 'original');
    fs.mkdirSync(path.join(workspace, 'other'));
    const policy = managedPolicy(workspace, [
      special('root', 'read'),
      special('project_roots', 'write'),
      pathEntry(path.join(workspace, 'sub', 'prot'), 'read'),
      // Missing: its first missing component gets a stand-in, which must stay where it is too.
      pathEntry(path.join(workspace, 'other', 'missing', 'deep'), 'read'),
    ]);
    const output = await confined(
      workspace,
      policy,
      [
        'mv sub moved && echo MOVED-SUB',
        'mkdir -p sub/prot && echo changed > sub/prot/config && echo WROTE-PROT',
        'mv other other.moved && echo MOVED-OTHER',
        'mkdir -p other/missing/deep && echo MADE-DEEP',
        'echo fine > sub/beside && echo WROTE-BESIDE',
      ].join('; '),
    );
    expect(output.match(/Device or resource busy/g)).toHaveLength(2);
    expect(output.match(/^[A-Z-]+$/gm)).toEqual(['WROTE-BESIDE']);
    expect(fs.readFileSync(path.join(workspace, 'sub', 'prot', 'config'), 'utf8')).toBe('original');
    expect(await entriesOnceReleased(workspace, ['other', 'sub'])).toEqual(['other', 'sub']);
  });
});
