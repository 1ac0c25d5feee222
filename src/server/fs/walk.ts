/**
 * `fs/walk` (generation 2): a breadth-first listing under a directory, as
 * Codex 0.169's exec-server gives it. Names in a directory are sorted
 * bytewise; only files and directories are listed, never the root; a
 * symlink is listed only when it leads to a directory and links are
 * followed, and a directory already met is listed but not walked again.
 * `truncated` says that a limit on entries or directories, or on the
 * answer's size, cut the walk short (the depth limit never does). `maxEntries` counts every entry met
 * that resolves, listed or not (a FIFO, a link not followed), as the
 * reference counts them; a dangling link does not count. Unreadable directories become
 * `errors` items, not a failed request.
 */
import type { Dirent, Stats } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Errors } from '../../protocol/errors.js';
import { errorMessage, fsError } from '../os-error.js';
import { isUnknownType } from './fs-operations.js';

const WALK_MAXIMUMS = { depth: 64, directories: 10_000, entries: 50_000 } as const;
/**
 * As the reference: an answer's estimated size (each item's URI, an error's
 * message, and 64 bytes) stays within 4 MiB; the walk stops, `truncated`,
 * before an item would take it past.
 */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
const ITEM_OVERHEAD_BYTES = 64;

export interface WalkOptions {
  maxDepth: number;
  maxDirectories: number;
  maxEntries: number;
  followDirectorySymlinks: boolean;
  pruneHiddenDirectories?: boolean;
}

export interface WalkResult {
  entries: Array<{ path: string; kind: 'file' | 'directory' }>;
  errors: Array<{ path: string; message: string }>;
  truncated: boolean;
}

/** Throws the reference's −32600 for limits of zero or over the maximums. */
function checkLimits(options: WalkOptions): void {
  if (options.maxEntries === 0 || options.maxDirectories === 0) throw Errors.walkLimitsZero();
  if (
    options.maxDepth > WALK_MAXIMUMS.depth ||
    options.maxDirectories > WALK_MAXIMUMS.directories ||
    options.maxEntries > WALK_MAXIMUMS.entries
  ) {
    throw Errors.walkLimitsTooLarge(WALK_MAXIMUMS.depth, WALK_MAXIMUMS.directories, WALK_MAXIMUMS.entries);
  }
}

const identity = (stat: Stats) => `${stat.dev}:${stat.ino}`;
const bytewise = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** A counted entry: listed as a file or a directory (to walk, maybe, by its identity), or met and not listed (no kind). */
interface Met {
  kind?: 'file' | 'directory';
  id?: string;
}

/** How many entries of a directory are looked at side by side (most need no syscall at all). */
const CLASSIFY_BATCH = 64;

/**
 * What a directory entry is for the walk; undefined for a link that leads
 * nowhere (nor counted). The type readdir gives is taken where it settles
 * it; a name that is not UTF-8 (shown with U+FFFD) is looked up, and fails
 * as in the reference.
 */
async function classify(child: string, entry: Dirent, follow: boolean): Promise<Met | undefined> {
  const known = !entry.name.includes('\uFFFD');
  if (known && entry.isFile()) return { kind: 'file' };
  if (known && !entry.isDirectory() && !entry.isSymbolicLink() && !isUnknownType(entry)) return {};
  const link = await fs.lstat(child);
  if (link.isFile()) return { kind: 'file' };
  if (link.isDirectory()) return { kind: 'directory', id: identity(link) };
  if (!link.isSymbolicLink()) return {};
  const target = await fs.stat(child).catch(() => undefined); // dangling links and loops
  if (!target) return undefined;
  return follow && target.isDirectory() ? { kind: 'directory', id: identity(target) } : {};
}

/** Each entry of `dir` classified (or the error looking it up), in order, a batch at a time. */
async function* classified(dir: string, entries: Dirent[], follow: boolean): AsyncGenerator<[string, string, Met | undefined | Error]> {
  for (let start = 0; start < entries.length; start += CLASSIFY_BATCH) {
    const batch = entries.slice(start, start + CLASSIFY_BATCH);
    const results = await Promise.all(
      batch.map((entry) => classify(path.join(dir, entry.name), entry, follow).catch((error: Error) => error)),
    );
    for (const [i, entry] of batch.entries()) yield [entry.name, path.join(dir, entry.name), results[i]];
  }
}

export async function walk(root: string, options: WalkOptions): Promise<WalkResult> {
  checkLimits(options);
  const result: WalkResult = { entries: [], errors: [], truncated: false };
  let rootStat: Stats;
  try {
    rootStat = await fs.stat(root);
  } catch (error) {
    throw fsError(error);
  }
  if (!rootStat.isDirectory()) return result;
  if ((await fs.lstat(root)).isSymbolicLink() && !options.followDirectorySymlinks) return result;
  const met = new Set([identity(rootStat)]);
  let estimated = 0;
  /** Whether an item of this path (and message) still fits the answer; counts it if it does. */
  const fits = (item: string, message = '') => {
    const cost = pathToFileURL(item).href.length + Buffer.byteLength(message) + ITEM_OVERHEAD_BYTES;
    if (estimated + cost > MAX_ANSWER_BYTES) return false;
    estimated += cost;
    return true;
  };
  /** Adds an error item, or says the answer is full. */
  const failed = (item: string, error: unknown) => {
    const message = errorMessage(error);
    if (!fits(item, message)) return false;
    result.errors.push({ path: item, message });
    return true;
  };
  const queue = [{ dir: root, depth: 0 }];
  let read = 0;
  let counted = 0;
  for (let next = queue.shift(); next; next = queue.shift()) {
    if (read === options.maxDirectories) {
      result.truncated = true;
      break;
    }
    read++;
    let entries: Dirent[];
    try {
      entries = (await fs.readdir(next.dir, { withFileTypes: true })).sort((a, b) => bytewise(a.name, b.name));
    } catch (error) {
      if (failed(next.dir, error)) continue;
      result.truncated = true;
      return result;
    }
    for await (const [name, child, found] of classified(next.dir, entries, options.followDirectorySymlinks)) {
      if (!found) continue;
      // An entry that could not be looked up counts against maxEntries as an entry does (the reference's count).
      if (counted === options.maxEntries) {
        result.truncated = true;
        return result;
      }
      counted++;
      if (found instanceof Error) {
        if (failed(child, found)) continue;
        result.truncated = true;
        return result;
      }
      if (found.kind === undefined) continue;
      if (!fits(child)) {
        result.truncated = true;
        return result;
      }
      result.entries.push({ path: child, kind: found.kind });
      if (found.kind !== 'directory' || met.has(found.id!)) continue;
      met.add(found.id!);
      const pruned = options.pruneHiddenDirectories === true && name.startsWith('.');
      if (!pruned && next.depth + 1 <= options.maxDepth) queue.push({ dir: child, depth: next.depth + 1 });
    }
  }
  return result;
}
