/**
 * A stand-in's directory on the host (`synthetic-mounts.ts`) as every server
 * sees it: its mark (a mode no user's `.git` has), and the claims servers put
 * in it while they use it. A claim's name says which server put it there: the
 * inode of its pid namespace, its pid, and a serial. A server judges only the
 * claims of its own pid namespace (a pid means nothing in another one) and
 * takes out those whose server is gone.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Sticky and owner-only: no user's `.git` has this mode. */
const STAND_IN_MODE = 0o1700;
/** The mark of stand-ins made by earlier versions (they held no claims). */
const OLD_STAND_IN_MODE = 0o000;
const CLAIM_PREFIX = '.exec-server-claim-';

/** This process's pid namespace, as the inode in `/proc/self/ns/pid` ("" if unknown: then no claim is judged). */
const PID_NAMESPACE = (() => {
  try {
    return /\[(\d+)\]/.exec(fs.readlinkSync('/proc/self/ns/pid'))?.[1] ?? '';
  } catch {
    return '';
  }
})();
/** The claims this process has put and not yet taken out (a claim of our pid and namespace not here is a dead server's). */
const ownClaims = new Set<string>();
let claimsMade = 0;

/** An empty directory, one holding only servers' claims, or none any more (another server just removed it): stood in for. */
export function isEmptyButForClaims(directory: string): boolean {
  try {
    return fs.readdirSync(directory).every((name) => name.startsWith(CLAIM_PREFIX));
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

type Found = 'stand-in' | 'user' | 'gone';

/** Linux's O_PATH (the same on every architecture Node runs on there): a handle on the inode itself, no read access needed. */
const O_PATH = 0o10000000;

/**
 * Gives the directory at `stand` the stand-in's mode through a handle that
 * followed no symlink: a confined child that can write the workspace could
 * swap the directory for a link between the mkdir and the chmod, and the
 * server (root, often) would change the mode of the link's target. An
 * O_PATH handle needs no read access (a stand-in of mode 000, or one made
 * under a umask without the owner's read bit), and chmod through
 * /proc/self/fd reaches exactly its inode.
 */
function markDirectory(stand: string): void {
  const fd = fs.openSync(stand, O_PATH | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW);
  try {
    fs.chmodSync(`/proc/self/fd/${fd}`, STAND_IN_MODE);
  } finally {
    fs.closeSync(fd);
  }
}

/** Makes `stand`'s directory, marked, or tells what is there. Never throws. */
function makeOrInspect(stand: string): Found {
  try {
    // Marked as it is made (Linux's mkdir keeps the sticky bit; a usual umask leaves the owner's bits), so that no
    // other server sees it unmarked, as a user's; the chmod only mends what an unusual umask took away.
    fs.mkdirSync(stand, STAND_IN_MODE);
    markDirectory(stand);
    return 'stand-in';
  } catch {
    try {
      const stat = fs.lstatSync(stand, { throwIfNoEntry: false });
      if (stat === undefined) return 'gone';
      const mode = stat.mode & 0o7777;
      if (!stat.isDirectory()) return 'user';
      if (mode === STAND_IN_MODE) return 'stand-in';
      if (mode !== OLD_STAND_IN_MODE) return 'user';
      markDirectory(stand); // an earlier version's: it can hold claims from now on
      return 'stand-in';
    } catch {
      return 'user'; // not ours to look into: left as it is
    }
  }
}

/**
 * Puts this process's claim in the stand-in at `stand` (made if missing), and
 * returns its path; undefined for a user's directory. Tried again if another
 * server removed the stand-in meanwhile, or a dead server of the same pid left
 * a claim of the same name.
 */
export function claimIn(stand: string): string | undefined {
  for (let attempt = 0; attempt < 5; attempt++) {
    const found = makeOrInspect(stand);
    if (found === 'user') return undefined;
    if (found === 'gone') continue;
    const claim = path.join(stand, `${CLAIM_PREFIX}${PID_NAMESPACE}-${process.pid}-${++claimsMade}`);
    try {
      fs.writeFileSync(claim, '', { flag: 'wx', mode: 0o600 });
      ownClaims.add(claim);
      return claim;
    } catch {
      // removed meanwhile, or that name is taken: again
    }
  }
  return undefined;
}

/** Takes out this process's claim. */
export function unclaim(claim: string): void {
  ownClaims.delete(claim);
  fs.rmSync(claim, { force: true });
}

/** Takes out the claims of servers of this pid namespace that are gone (killed before they let go). */
export function removeStaleClaims(stand: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(stand);
  } catch {
    return;
  }
  for (const name of names) {
    const [namespace, pidText] = name.startsWith(CLAIM_PREFIX) ? name.slice(CLAIM_PREFIX.length).split('-') : [];
    const pid = Number(pidText);
    if (PID_NAMESPACE === '' || namespace !== PID_NAMESPACE || !Number.isInteger(pid) || pid <= 0) continue;
    const claim = path.join(stand, name);
    const gone = pid === process.pid ? !ownClaims.has(claim) : !isAlive(pid);
    if (gone) fs.rmSync(claim, { force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
