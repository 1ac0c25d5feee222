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
 * server.
 */
import fs from 'node:fs';
import { mountedElsewhere, mountedElsewhereSoon } from './mount-table.js';
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
  /** Let go of: removed once the mount tables, read off the loop, say no other namespace stands on them. */
  private readonly toRemove = new Set<string>();
  /** Stand-ins whose directory is being removed now. */
  private readonly rmdirs = new Map<string, Promise<void>>();
  private readonly flushes = new Set<Promise<unknown>>();
  private flushScheduled = false;
  private exitHooked = false;

  /**
   * Holds the stand-ins of `confinement` for one child. An existing path
   * that is a stand-in (ours, held or not yet removed; or another server's,
   * by its mark) is taken as a stand-in again, not as the directory it looks
   * like: a tmpfs on it is the same cover, and bwrap makes its mount point
   * again if the stand-in's server removes it first. One whose directory is
   * being removed here is made again once it is gone.
   */
  async hold(confinement: Confinement): Promise<HeldConfinement> {
    const standIn = (candidate: string) =>
      this.users.has(candidate) || this.toRemove.has(candidate) || this.rmdirs.has(candidate) || isMarked(candidate);
    const synthetic = [...new Set([...confinement.synthetic, ...confinement.readOnly.filter(standIn)])];
    const readOnly = confinement.readOnly.filter((candidate) => !synthetic.includes(candidate));
    const removing = synthetic.flatMap((stand) => this.rmdirs.get(stand) ?? []);
    if (removing.length > 0) await Promise.all(removing);
    for (const stand of synthetic) {
      if (!this.users.has(stand) && madeOrMarked(stand)) this.removable.add(stand);
      this.users.set(stand, (this.users.get(stand) ?? 0) + 1);
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

  /** Resolves once every stand-in let go of so far has been removed (or left, in use elsewhere). */
  async settled(): Promise<void> {
    while (this.flushScheduled || this.flushes.size > 0) {
      await (this.flushScheduled ? new Promise((resolve) => setImmediate(resolve)) : Promise.all(this.flushes));
    }
  }

  /**
   * Removes what was let go of, off the loop: reading every mount table
   * and removing a directory that was mounted on take milliseconds, which
   * the requests behind the release should not wait for.
   */
  private flush(): void {
    const candidates = [...this.toRemove];
    if (candidates.length === 0) {
      this.unhookExit();
      return;
    }
    const flush = mountedElsewhereSoon(candidates).then((busy) => {
      const removals: Array<Promise<void>> = [];
      for (const stand of candidates) {
        if (!this.toRemove.delete(stand) || this.users.has(stand)) continue; // taken again meanwhile
        // Another server's sandbox stands on it (it took it for its own stand-in): that server removes it.
        if (!busy.has(stand)) removals.push(this.remove(stand));
      }
      return Promise.all(removals);
    });
    this.flushes.add(flush);
    void flush.finally(() => {
      this.flushes.delete(flush);
      this.unhookExit();
    });
  }

  /** Removes a stand-in's directory if it is still empty: anything put there on the host stays. */
  private remove(stand: string): Promise<void> {
    const gone = fs.promises.rmdir(stand).catch(() => undefined);
    this.rmdirs.set(stand, gone);
    return gone.finally(() => {
      if (this.rmdirs.get(stand) === gone) this.rmdirs.delete(stand);
    });
  }

  /** At exit, at once: what was let go of, and what was being removed when the loop stopped. */
  private readonly flushAtExit = () => {
    const left = [...new Set([...this.toRemove, ...this.rmdirs.keys()])].filter((stand) => !this.users.has(stand));
    const busy = mountedElsewhere(left);
    for (const stand of left) {
      if (busy.has(stand)) continue;
      try {
        fs.rmdirSync(stand);
      } catch {
        // gone already, or not empty
      }
    }
  };

  private unhookExit(): void {
    const idle = this.users.size === 0 && this.toRemove.size === 0 && this.rmdirs.size === 0 && this.flushes.size === 0;
    if (!this.exitHooked || !idle) return;
    process.off('exit', this.flushAtExit);
    this.exitHooked = false;
  }

  /** Counts the release at once; the removal starts on the next turn of the loop. */
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

/** Whether `path` is a directory with a stand-in's mark. */
function isMarked(path: string): boolean {
  const stat = fs.lstatSync(path, { throwIfNoEntry: false });
  return stat?.isDirectory() === true && (stat.mode & 0o777) === STAND_IN_MODE;
}

/** Makes `stand`'s directory, marked; true if it is a stand-in's (made now, or by another server), false for a user's. */
function madeOrMarked(stand: string): boolean {
  try {
    fs.mkdirSync(stand, STAND_IN_MODE);
    return true;
  } catch {
    return isMarked(stand);
  }
}
