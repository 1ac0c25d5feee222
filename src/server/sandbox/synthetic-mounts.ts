/**
 * Stand-ins for protected paths that do not exist yet (`protected-paths.ts`):
 * bwrap mounts an empty read-only tmpfs on each, whose mount point, an empty
 * directory, must be in the host's tree (the writable root is the host's
 * directory). It is made here, with no permissions, as the mark of a
 * stand-in. Once no confined child of this process uses a stand-in any
 * more, its directory is removed again, if it is still empty; a user's
 * empty directory that was there before stays.
 *
 * Removing a directory detaches whatever is mounted on it in every mount
 * namespace, so a stand-in still used by another child must stay: it is
 * counted, and a child confined while another holds it takes it as a
 * stand-in too (not as the existing directory it now looks like). A
 * stand-in that is still mounted on in another mount namespace (another
 * server's sandbox, which took it for its own stand-in) is left to that
 * server. So is one another server claimed after this one: each holder
 * touches it when it takes it (its ctime changes), and a server removes only
 * a stand-in whose ctime is still the one it saw, so that none removes it
 * between another's claim and that one's mount (bwrap would then make the
 * mount point itself, unmarked, and it would stay for good).
 */
import fs from 'node:fs';
import { mountedElsewhere } from './mount-table.js';
import type { Confinement } from './policy.js';

export interface HeldConfinement {
  /** The confinement to mount: stand-ins held elsewhere in this process moved from `readOnly` to `synthetic`. */
  confinement: Confinement;
  /** Gives the stand-ins back once the child is gone (idempotent). */
  release(): void;
}

export class SyntheticMounts {
  private readonly users = new Map<string, number>();
  /** The held stand-ins whose directories are stand-ins' (made by a server), not a user's. */
  private readonly removable = new Set<string>();
  /** The ctime each stand-in had once this process claimed it: changed since, another server has claimed it. */
  private readonly claims = new Map<string, bigint>();
  /** Let go of, to be removed by `flush`. */
  private readonly toRemove = new Set<string>();
  private flushScheduled = false;
  private exitHooked = false;

  hold(confinement: Confinement): HeldConfinement {
    // Held by another child, or let go of and not yet removed (the removal waits for the next turn of
    // the loop): still a stand-in, taken again as one, not as the existing directory it looks like.
    const heldElsewhere = (candidate: string) => this.users.has(candidate) || this.toRemove.has(candidate);
    const synthetic = [...new Set([...confinement.synthetic, ...confinement.readOnly.filter(heldElsewhere)])];
    const readOnly = confinement.readOnly.filter((candidate) => !heldElsewhere(candidate));
    for (const stand of synthetic) {
      if (!this.users.has(stand) && madeOrMarked(stand)) this.removable.add(stand);
      this.users.set(stand, (this.users.get(stand) ?? 0) + 1);
      // Only a marked one: a user's empty directory is left as it is, times included.
      const claim = this.removable.has(stand) ? claimed(stand) : undefined;
      if (claim !== undefined) this.claims.set(stand, claim);
    }
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.drop(synthetic);
    };
    return { confinement: { ...confinement, readOnly, synthetic }, release };
  }

  /** How many children hold `stand` (for tests). */
  usersOf(stand: string): number {
    return this.users.get(stand) ?? 0;
  }

  /** Removes the stand-ins let go of (called soon after a release, and at exit). */
  flush(): void {
    const unused = [...this.toRemove].filter((stand) => !this.users.has(stand));
    this.toRemove.clear();
    if (this.users.size === 0 && this.exitHooked) {
      process.off('exit', this.flushAtExit);
      this.exitHooked = false;
    }
    if (unused.length === 0) return;
    // Another server's sandbox may stand on one (it took it for its own stand-in): that server removes it.
    const busy = mountedElsewhere(unused);
    for (const stand of unused) {
      const claim = this.claims.get(stand);
      this.claims.delete(stand);
      if (busy.has(stand) || ctimeOf(stand) !== claim) continue;
      try {
        fs.rmdirSync(stand); // only an empty directory: anything put there on the host stays
      } catch {
        // gone already, or not empty
      }
    }
  }

  private readonly flushAtExit = () => this.flush();

  /** Counts the release at once; the removal, which reads every mount table, runs on the next turn of the loop. */
  private drop(stands: string[]): void {
    for (const stand of stands) {
      const left = (this.users.get(stand) ?? 1) - 1;
      if (left > 0) this.users.set(stand, left);
      else {
        this.users.delete(stand);
        if (this.removable.delete(stand)) this.toRemove.add(stand);
      }
    }
    if (this.toRemove.size === 0 || this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
    if (!this.exitHooked) {
      process.once('exit', this.flushAtExit); // a server that exits first still removes them
      this.exitHooked = true;
    }
  }
}

/** A stand-in's directory has no permissions at all, which no user's `.git` has: any server can tell it from one. */
const STAND_IN_MODE = 0o000;

/** Makes `stand`'s directory, marked; true if it is a stand-in's (made now, or by another server), false for a user's. */
function madeOrMarked(stand: string): boolean {
  try {
    fs.mkdirSync(stand, STAND_IN_MODE);
    return true;
  } catch {
    const stat = fs.lstatSync(stand, { throwIfNoEntry: false });
    return stat?.isDirectory() === true && (stat.mode & 0o777) === STAND_IN_MODE;
  }
}

/** Touches `stand` (which changes its ctime) and returns its ctime after; undefined if it cannot be touched. */
function claimed(stand: string): bigint | undefined {
  try {
    const now = new Date();
    fs.utimesSync(stand, now, now);
  } catch {
    return undefined; // another user's: its removal is not ours either
  }
  return ctimeOf(stand);
}

function ctimeOf(stand: string): bigint | undefined {
  return fs.statSync(stand, { bigint: true, throwIfNoEntry: false })?.ctimeNs;
}
