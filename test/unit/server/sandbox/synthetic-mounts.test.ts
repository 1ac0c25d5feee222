import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findBwrap } from '../../../../src/server/sandbox/bwrap.js';
import { mountedElsewhere } from '../../../../src/server/sandbox/mount-table.js';
import type { Confinement } from '../../../../src/server/sandbox/policy.js';
import { SyntheticMounts } from '../../../../src/server/sandbox/synthetic-mounts.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'stand-ins-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const confinement = (synthetic: string[], readOnly: string[] = []): Confinement => ({
  writable: [root],
  readOnly,
  synthetic,
  noNetwork: false,
});

/** Lets go of `held` and does at once the removals a later turn would do. */
function letGo(mounts: SyntheticMounts, held: { release(): void }): void {
  held.release();
  mounts.flush();
}

describe('SyntheticMounts', () => {
  it('makes a stand-in marked, and removes it when its last holder lets go', () => {
    const stand = path.join(root, '.git');
    const mounts = new SyntheticMounts();
    const first = mounts.hold(confinement([stand]));
    expect(fs.statSync(stand).mode & 0o7777).toBe(0o1700);
    // A second child finds the stand-in as an existing directory: it holds it as a stand-in too.
    const second = mounts.hold(confinement([], [stand]));
    expect(second.confinement).toMatchObject({ readOnly: [], synthetic: [stand] });
    expect(mounts.usersOf(stand)).toBe(2);
    first.release();
    first.release(); // once only
    mounts.flush();
    expect(fs.existsSync(stand)).toBe(true);
    letGo(mounts, second); // what the next turn of the loop does
    expect(fs.existsSync(stand)).toBe(false);
  });

  // Two servers (two SyntheticMounts) hold one stand-in; the first lets go while the second has taken
  // it and not yet mounted it (its bwrap is slow to start), whichever of the two claimed it first.
  it.each([
    ['after', '.aws'],
    ['before', '.git'],
  ])('leaves a stand-in another server claimed %s it to that server, which removes it', (order, name) => {
    const stand = path.join(root, name);
    const [first, second] = [new SyntheticMounts(), new SyntheticMounts()];
    let firstHold: ReturnType<SyntheticMounts['hold']>;
    let secondHold: ReturnType<SyntheticMounts['hold']>;
    if (order === 'after') {
      firstHold = first.hold(confinement([stand]));
      secondHold = second.hold(confinement([stand]));
    } else {
      secondHold = second.hold(confinement([stand]));
      firstHold = first.hold(confinement([stand]));
    }
    firstHold.release();
    first.flush();
    expect(fs.existsSync(stand)).toBe(true); // removed here, bwrap would make it again, unmarked, for the second
    secondHold.release();
    second.flush();
    expect(fs.existsSync(stand)).toBe(false);
  });

  it('takes out the claims of servers of its pid namespace that are gone, and then removes the stand-in', () => {
    const stand = path.join(root, '.agents');
    const namespace = /\[(\d+)\]/.exec(fs.readlinkSync('/proc/self/ns/pid'))![1];
    const gone = spawnSync('true').pid!; // reaped: its pid is free
    const claim = (name: string) => path.join(stand, `.exec-server-claim-${name}`);
    const mounts = new SyntheticMounts();
    const held = mounts.hold(confinement([stand]));
    fs.writeFileSync(claim(`${namespace}-${gone}-1`), ''); // a server that is gone
    fs.writeFileSync(claim(`${namespace}-${process.pid}-999999`), ''); // a dead server that had this pid: not one of ours
    fs.writeFileSync(claim(`${namespace}-${process.ppid}-1`), ''); // alive: kept
    fs.writeFileSync(claim(`1-${gone}-1`), ''); // another pid namespace, where that pid may be alive: kept
    letGo(mounts, held);
    expect(fs.readdirSync(stand).sort()).toEqual(
      [`.exec-server-claim-${namespace}-${process.ppid}-1`, `.exec-server-claim-1-${gone}-1`].sort(),
    );
    for (const name of fs.readdirSync(stand)) fs.rmSync(path.join(stand, name));
    letGo(mounts, mounts.hold(confinement([stand])));
    expect(fs.existsSync(stand)).toBe(false);
  });

  it('stands in for a read-only path under a writable root that is gone since the policy was sorted', () => {
    const stand = path.join(root, '.codex');
    const mounts = new SyntheticMounts();
    const held = mounts.hold(confinement([], [stand]));
    expect(held.confinement).toMatchObject({ readOnly: [], synthetic: [stand] });
    expect(fs.statSync(stand).mode & 0o7777).toBe(0o1700);
    letGo(mounts, held);
    expect(fs.existsSync(stand)).toBe(false);
  });

  it("takes an earlier version's empty stand-in (mode 000) as a stand-in, and removes it", () => {
    const stand = path.join(root, '.aws');
    fs.mkdirSync(stand, 0o000);
    const mounts = new SyntheticMounts();
    letGo(mounts, mounts.hold(confinement([stand])));
    expect(fs.existsSync(stand)).toBe(false);
  });

  it('takes back a stand-in let go of but not yet removed, as a stand-in, and keeps it while held', () => {
    const stand = path.join(root, '.agents');
    const mounts = new SyntheticMounts();
    mounts.hold(confinement([stand])).release();
    // The next child's policy finds the directory before the next turn removes it: a stand-in again.
    const again = mounts.hold(confinement([], [stand]));
    expect(again.confinement).toMatchObject({ readOnly: [], synthetic: [stand] });
    mounts.flush();
    expect(fs.statSync(stand).mode & 0o7777).toBe(0o1700);
    letGo(mounts, again);
    expect(fs.existsSync(stand)).toBe(false);
  });

  it("leaves a user's empty directory, and a stand-in something was put in", () => {
    const users = path.join(root, 'users');
    fs.mkdirSync(users);
    const mounts = new SyntheticMounts();
    letGo(mounts, mounts.hold(confinement([users])));
    expect(fs.existsSync(users)).toBe(true);
    const stand = path.join(root, '.codex');
    const held = mounts.hold(confinement([stand]));
    fs.chmodSync(stand, 0o700);
    fs.writeFileSync(path.join(stand, 'kept'), '');
    letGo(mounts, held);
    expect(fs.readdirSync(stand)).toEqual(['kept']);
  });
});

describe.skipIf(findBwrap(undefined) === undefined)('mountedElsewhere', () => {
  it("sees a mount in another process's namespace, and not once that process is gone", async () => {
    const point = path.join(root, 'mount point');
    fs.mkdirSync(point);
    const bwrap = findBwrap(undefined)!;
    const child = spawn(
      bwrap,
      ['--die-with-parent', '--unshare-pid', '--ro-bind', '/', '/', '--tmpfs', point, '--', 'sh', '-c', 'echo up; exec sleep 60'],
      { stdio: 'pipe' },
    );
    let stderr = '';
    child.stderr.on('data', (bytes) => (stderr += bytes));
    const up = await new Promise((resolve) => {
      child.stdout.once('data', () => resolve(true));
      child.once('exit', () => resolve(false));
    });
    expect(up, stderr).toBe(true);
    try {
      expect([...mountedElsewhere([point, root])]).toEqual([point]);
    } finally {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('close', resolve));
    }
    expect(mountedElsewhere([point]).size).toBe(0);
  });
});
