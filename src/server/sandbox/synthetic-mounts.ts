/**
 * Stand-ins for protected paths that do not exist yet (`protected-paths.ts`):
 * bwrap mounts an empty read-only tmpfs on each, whose mount point, an empty
 * directory, must be in the host's tree (the writable root is the host's
 * directory). It is made here, marked by its mode (sticky, owner-only),
 * which no user's `.git` has. Once no confined child of this process uses a
 * stand-in any more, its directory is removed again, if it is empty but for
 * claims; a user's empty directory that was there before stays.
 *
 * Removing a directory detaches whatever is mounted on it in every mount
 * namespace, so a stand-in still used by another child must stay: it is
 * counted, and a child confined while another holds it takes it as a
 * stand-in too (not as the existing directory it now looks like). A
 * stand-in that is still mounted on in another mount namespace (another
 * server's sandbox, which took it for its own stand-in) is left to that
 * server. Each server that takes a stand-in puts a claim in it (an empty
 * file named after its pid, hidden under the mount) and, letting go, takes
 * its claim out and removes the directory only if nothing is left in it:
 * rmdir fails while another server holds a claim, even one whose bwrap has
 * not mounted yet (removed then, bwrap would make the mount point itself,
 * unmarked, and it would stay for good). Claims of servers that are gone
 * are taken out by the next server that lets go of the stand-in
 * (`stand-in-claims.ts`).
 */
import fs from 'node:fs';
import { mountedElsewhere } from './mount-table.js';
import { isBelow } from './protected-paths.js';
import { claimIn, removeStaleClaims, unclaim } from './stand-in-claims.js';
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
  /** The claim this process put in each stand-in it holds. */
  private readonly claims = new Map<string, string>();
  /** Let go of, to be removed by `flush`. */
  private readonly toRemove = new Set<string>();
  private flushScheduled = false;
  private exitHooked = false;

  hold(confinement: Confinement): HeldConfinement {
    // Held by another child, or let go of and not yet removed (the removal waits for the next turn of
    // the loop): still a stand-in, taken again as one, not as the existing directory it looks like.
    const heldElsewhere = (candidate: string) => this.users.has(candidate) || this.toRemove.has(candidate);
    // A read-only path under a writable root that is gone since the policy was sorted (another server removed its
    // stand-in) would be left out of the mounts, and the child could make it: it is stood in for instead.
    const vanished = (candidate: string) =>
      fs.lstatSync(candidate, { throwIfNoEntry: false }) === undefined && confinement.writable.some((root) => isBelow(candidate, root));
    const standInFor = (candidate: string) => heldElsewhere(candidate) || vanished(candidate);
    const synthetic = [...new Set([...confinement.synthetic, ...confinement.readOnly.filter(standInFor)])];
    const readOnly = confinement.readOnly.filter((candidate) => !synthetic.includes(candidate));
    for (const stand of synthetic) {
      if (!this.users.has(stand)) {
        // Only a marked one: a user's empty directory is left as it is. Taken back before its removal, it keeps its claim.
        const claim = this.claims.get(stand) ?? claimIn(stand);
        if (claim !== undefined) {
          this.removable.add(stand);
          this.claims.set(stand, claim);
        }
      }
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
      if (claim !== undefined) unclaim(claim);
      if (busy.has(stand)) continue;
      removeStaleClaims(stand);
      try {
        fs.rmdirSync(stand); // only an empty directory: another server's claim, or anything put there on the host, keeps it
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
