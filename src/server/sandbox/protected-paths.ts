/**
 * The read-only paths inside writable roots: a policy's own, and the
 * directories that stay read-only directly under every writable root
 * whatever the policy lists (Codex 0.169's sandbox protects the same ones):
 * an agent must not rewrite a repository's history, Codex's own state or
 * cloud credentials.
 *
 * An existing one is bound read-only over its root. A missing one could be
 * created by the child, so its first missing component is covered by an
 * empty read-only directory (a "stand-in", see `synthetic-mounts.ts`). One
 * reached through a symlink inside a writable root cannot be protected (the
 * mount lands on the link's target and the link can be replaced): the
 * policy is refused, as the reference refuses it. Beyond the reference, so
 * is a writable path reached through a symlink inside another writable root:
 * a child of an earlier start could have planted the link, and the path
 * would be mounted writable at the link's target, anywhere on the host.
 *
 * Beyond the reference: the server's own code (`serverCode` in
 * `package/files.ts`) stays read-only too where a writable root reaches it
 * (a server installed in the workspace, or under a writable /tmp), so that a
 * confined child cannot rewrite what the unconfined server runs next. A
 * directory holding a mount can still be renamed, and another put in its
 * place: so each directory between a writable root and the code, or any
 * read-only path or stand-in, that the policy leaves writable is "pinned",
 * bound onto itself as it is, which makes it a mount point that cannot be
 * renamed or removed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Errors } from '../../protocol/errors.js';
import { isEmptyButForClaims } from './stand-in-claims.js';

const PROTECTED_NAMES = ['.git', '.codex', '.agents', '.aws'];

export interface ProtectedPaths {
  /** Existing paths to bind read-only. */
  readOnly: string[];
  /** Missing paths inside writable roots to cover with a stand-in. */
  synthetic: string[];
  /** Directories to bind onto themselves (writable), so that they cannot be renamed. */
  pinned: string[];
}

/**
 * Sorts the policy's read-only paths, and the protected names under each
 * writable root, into what to bind and what to stand in for. An empty
 * directory at a protected name (or one holding only servers' claims) is
 * stood in for too: it may be another server's stand-in, which the last
 * server to let go of it removes.
 */
export function protectReadOnly(writable: string[], policyReadOnly: string[], serverCode: string[] = []): ProtectedPaths {
  // Under a writable root that is a directory: a file bound writable has nothing under it.
  const directories = writable.filter((root) => isDirectory(root));
  const protectedNames = directories.flatMap((root) => PROTECTED_NAMES.map((name) => path.join(root, name)));
  // Each writable root as given and as its real path, resolved once.
  const bases = [...new Set(writable.flatMap((root) => [root, realOrSelf(root)]))];
  const result: ProtectedPaths = { readOnly: [], synthetic: [], pinned: [] };
  const add = (list: string[], entry: string) => list.includes(entry) || list.push(entry);
  // A writable path reached through a link a child could have planted (an earlier start's) would mount the link's target.
  for (const candidate of writable)
    refuseWritableSymlink(
      candidate,
      'writable',
      bases.filter((base) => base !== '/'),
    );
  /** Pins the directories between each writable root and `mounted`: renamed, they would take its mount along. */
  const pinAbove = (mounted: string) => {
    for (const base of bases)
      if (isBelow(mounted, base)) for (const directory of directoriesBetween(base, mounted)) add(result.pinned, directory);
  };
  for (const candidate of new Set([...policyReadOnly, ...protectedNames])) {
    refuseWritableSymlink(candidate, 'read-only', bases);
    const missing =
      firstMissing(candidate) ?? (protectedNames.includes(candidate) && isEmptyButForClaims(candidate) ? candidate : undefined);
    if (missing === undefined) add(result.readOnly, candidate);
    // A missing path outside every writable root cannot be created: the whole file system is read-only there.
    else if (bases.some((base) => isBelow(missing, base))) add(result.synthetic, missing);
    pinAbove(missing ?? candidate);
  }
  // The server's own code (real paths, no symlink to refuse), wherever a writable root reaches it.
  for (const code of serverCode)
    for (const base of bases) {
      // A writable root inside the code is made read-only itself: mounted deeper, it would win over the code's mount.
      if (code === base || isBelow(base, code)) {
        add(result.readOnly, code);
        add(result.readOnly, base);
      }
      if (!isBelow(code, base)) continue;
      add(result.readOnly, code);
      pinAbove(code);
    }
  result.pinned = result.pinned.filter((directory) => leftWritable(directory, bases, [...result.readOnly, ...result.synthetic]));
  return result;
}

/**
 * Whether the deepest mount over `directory` is a writable root: a pin is a
 * writable mount, and under a read-only one (or a stand-in) it would make
 * that part writable again. Real paths, as bwrap mounts them all.
 */
function leftWritable(directory: string, writable: string[], readOnly: string[]): boolean {
  const mounts = [
    ...writable.map((at) => ({ at: realOrSelf(at), readOnly: false })),
    ...readOnly.map((at) => ({ at: realOrSelf(at), readOnly: true })),
  ].filter(({ at }) => directory === at || isBelow(directory, at));
  if (mounts.length === 0) return false;
  // All lie on the path to `directory`: the longest is the deepest; for one path, read-only wins (it is mounted last).
  const deepest = mounts.reduce((a, b) => (b.at.length > a.at.length || (b.at.length === a.at.length && b.readOnly) ? b : a));
  return !deepest.readOnly;
}

/** The directories strictly between `base` and `below` (which is below it), outermost first. */
function directoriesBetween(base: string, below: string): string[] {
  const parts = path.relative(base, below).split(path.sep).slice(0, -1);
  return parts.map((_, index) => path.join(base, ...parts.slice(0, index + 1)));
}

function isDirectory(candidate: string): boolean {
  try {
    return fs.statSync(candidate).isDirectory();
  } catch {
    return false;
  }
}

/** The first component of `target` that does not exist (a dangling symlink exists), its parent resolved; undefined if all do. */
function firstMissing(target: string): string | undefined {
  let current = path.parse(target).root;
  for (const part of target.split(path.sep).filter(Boolean)) {
    const next = path.join(current, part);
    if (lstatOrNothing(next) === undefined) return path.join(realOrSelf(current), part);
    current = next;
  }
  return undefined;
}

/** Whether `candidate` is strictly below `base`. */
export function isBelow(candidate: string, base: string): boolean {
  const relative = path.relative(base, candidate);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

/** Refuses the policy when a component of `target` below a writable root (`bases`) is a symlink. */
function refuseWritableSymlink(target: string, access: 'read-only' | 'writable', bases: string[]): void {
  for (const root of bases) {
    if (!isBelow(target, root)) continue;
    let current = root;
    for (const part of path.relative(root, target).split(path.sep)) {
      current = path.join(current, part);
      const stat = lstatOrNothing(current);
      if (!stat) break;
      if (stat.isSymbolicLink())
        throw Errors.sandboxUnenforceable(`the ${access} path ${target}, which crosses the writable symlink ${current}`);
    }
  }
}

/** What is at `candidate`, or undefined if nothing can be (missing, or under a file). */
function lstatOrNothing(candidate: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(candidate, { throwIfNoEntry: false });
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** The real path of `candidate`, or `candidate` itself if it has none (missing). */
export function realOrSelf(candidate: string): string {
  try {
    return fs.realpathSync(candidate);
  } catch {
    return candidate;
  }
}
