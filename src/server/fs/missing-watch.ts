/**
 * `fs/watchMissing` (generation 2), as Codex 0.169's exec-server keeps it:
 * one watch per connection, replaced by any request with a larger
 * `watchId` (a smaller or equal one changes nothing and answers false). A
 * watch notifies once (`fs/missingChanged`) when one of its `missing` paths,
 * or a missing directory on the way to one, comes into existence, when its
 * `present` path changes or disappears, or when a directory on the way to
 * either changes (moved, removed, its attributes changed). It answers false when a `missing` path
 * already exists (by lstat: a dangling symlink counts), when `missing` is
 * empty, when `present` does not exist, or when any path goes through a
 * symlink that exists (`present` itself, or a directory on the way to any
 * path: `/var/run/x` where `/var/run` → `/run`), through a directory on a
 * file system whose changes a watch may miss (proc, sysfs, a network file
 * system) or one it may not read, or when a path cannot be looked at (no
 * permission on the way), as the reference refuses it.
 *
 * Each directory on the way is watched (inotify by `fs.watch`) for the one
 * name that matters there. As there, a watch of more than 64 `missing`
 * paths, or through more than 64 directories, is not taken (false).
 */
import fs, { type FSWatcher } from 'node:fs';
import { errnoCode, fsError } from '../os-error.js';

/** lstat that says whether anything is there (a path under a file counts, as the reference has it). */
function exists(target: string): boolean {
  try {
    fs.lstatSync(target);
    return true;
  } catch (error) {
    return errnoCode(error) !== 'ENOENT';
  }
}

/**
 * The file systems whose changes inotify sees in full: local disk and memory
 * ones (`statfs` types). Codex 0.169 accepts a watch through ext4, tmpfs and
 * overlay, and refuses one through proc, sysfs, devpts, cgroup2, debugfs,
 * tracefs, bpf, hugetlbfs, securityfs, pstore, fusectl, binfmt_misc, mqueue
 * and ramfs (tried here); the other disk file systems are accepted here
 * because a watch works on them. Network and FUSE file systems are not: a
 * change made on another machine makes no event.
 */
const WATCHABLE_FILESYSTEMS = new Set([
  0xef53, // ext2, ext3, ext4
  0x01021994, // tmpfs, devtmpfs
  0x794c7630, // overlay
  0x58465342, // xfs
  0x9123683e, // btrfs
  0xf2f52010, // f2fs
  0x2fc12fc1, // zfs
  0xca451a4e, // bcachefs
]);

/** Absent, as far as a path can tell: nothing there, or a file where a directory was to be. */
const gone = (error: unknown) => errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR';

/** What an existing directory on the way to a path says of a watch through it. */
type Verdict = 'watchable' | 'refused' | 'absent';

/**
 * A symlink, one it may not look at (no permission on the way), one on a
 * file system whose changes a watch may miss, or one it may not read (a
 * watch on it is refused) refuses the watch, as the reference watches each
 * directory on the way.
 */
function judge(directory: string): Verdict {
  try {
    if (fs.lstatSync(directory).isSymbolicLink()) return 'refused';
  } catch (error) {
    return gone(error) ? 'absent' : 'refused';
  }
  try {
    if (!WATCHABLE_FILESYSTEMS.has(fs.statfsSync(directory).type)) return 'refused';
    fs.accessSync(directory, fs.constants.R_OK);
    return 'watchable';
  } catch {
    return 'refused';
  }
}

/**
 * Whether a watch of `target` is refused by a directory on its way (each
 * judged once per request, in `seen`: many paths deep in one tree share
 * them) or by the path itself: a symlink, or one it may not look at.
 */
function refusedPath(target: string, seen: Map<string, Verdict>): boolean {
  const components = target.split('/').filter(Boolean);
  let directory = '/';
  for (const component of components) {
    const verdict = seen.get(directory) ?? judge(directory);
    seen.set(directory, verdict);
    if (verdict === 'refused') return true;
    if (verdict === 'absent') return false; // nothing further exists
    directory = directory === '/' ? `/${component}` : `${directory}/${component}`; // no path.join: it rescans the whole path
  }
  try {
    return fs.lstatSync(target).isSymbolicLink();
  } catch (error) {
    return !gone(error);
  }
}

/** Why a watch is refused (answered false) before it starts. */
function refused(missing: string[], present: string | undefined): boolean {
  if (missing.length === 0 || missing.some(exists)) return true;
  if (present !== undefined && !exists(present)) return true;
  const seen = new Map<string, Verdict>();
  return [...missing, ...(present === undefined ? [] : [present])].some((target) => refusedPath(target, seen));
}

/**
 * The reference's bounds on one watch: more `missing` paths, or more
 * directories to watch on the way to them, and it answers false.
 */
const MAX_MISSING_PATHS = 64;
const MAX_WATCHED_DIRECTORIES = 64;

/**
 * What to watch for `missing` and `present`: every directory on the way to
 * each path, for the next name on it, down to the first that is missing (or
 * to `present` itself); and, for each missing path, that first missing one,
 * whose appearance fires.
 */
function plan(missing: string[], present: string | undefined): { names: Map<string, Set<string>>; awaited: string[] } {
  const names = new Map<string, Set<string>>();
  const add = (dir: string, name: string) => names.set(dir, (names.get(dir) ?? new Set()).add(name));
  const walk = (target: string): string => {
    let dir = '/';
    for (const name of target.split('/').filter(Boolean)) {
      add(dir, name);
      const next = dir === '/' ? `/${name}` : `${dir}/${name}`; // no path.join: it rescans the whole path
      if (!exists(next)) return next;
      dir = next;
    }
    return dir;
  };
  const awaited = missing.map(walk);
  if (present) walk(present);
  return { names, awaited };
}

class ActiveWatch {
  private watchers: FSWatcher[] = [];
  private fired = false;

  constructor(
    private readonly watchId: number,
    /** For each missing path, the first of its components that is missing: its appearance fires. */
    private readonly awaited: string[],
    private readonly present: string | undefined,
    private readonly notify: (watchId: number) => void,
    names: Map<string, Set<string>>,
  ) {
    this.watch(names);
    // It may have changed while the watchers were being set up; checked after the answer goes out.
    setImmediate(() => this.check());
  }

  /**
   * Any change to one of the watched names (made, removed, moved, written,
   * its attributes changed) fires, as the reference's watch of each
   * directory on the way does; a change to anything else in those
   * directories does not.
   */
  private watch(names: Map<string, Set<string>>): void {
    try {
      for (const [dir, watched] of names) {
        const watcher = fs.watch(dir, { persistent: false }, (_event, name) => {
          if (name === null || watched.has(name.toString())) this.fire();
        });
        watcher.on('error', () => this.fire());
        this.watchers.push(watcher);
      }
    } catch (error) {
      this.close();
      throw fsError(error);
    }
  }

  /** What changed before the watchers were there made no event: look. */
  private check(): void {
    if (this.awaited.some(exists) || (this.present !== undefined && !exists(this.present))) this.fire();
  }

  private fire(): void {
    if (this.fired) return;
    this.fired = true;
    this.close();
    this.notify(this.watchId);
  }

  private close(): void {
    for (const watcher of this.watchers.splice(0)) watcher.close();
  }

  /** Replaced or the session ended: it will never notify. */
  cancel(): void {
    this.fired = true;
    this.close();
  }
}

export class MissingWatches {
  private mark = 0;
  private current: ActiveWatch | undefined;

  constructor(private readonly notify: (watchId: number) => void) {}

  watch(watchId: number, missing: string[], present: string | undefined): { watching: boolean } {
    if (watchId <= this.mark) return { watching: false };
    this.mark = watchId;
    this.close();
    if (missing.length > MAX_MISSING_PATHS || refused(missing, present)) return { watching: false };
    const { names, awaited } = plan(missing, present);
    if (names.size > MAX_WATCHED_DIRECTORIES) return { watching: false };
    try {
      this.current = new ActiveWatch(watchId, awaited, present, this.notify, names);
    } catch {
      return { watching: false }; // a directory it cannot watch (no permission): not watching, as the reference answers
    }
    return { watching: true };
  }

  close(): void {
    this.current?.cancel();
    this.current = undefined;
  }
}
