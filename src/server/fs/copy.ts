/**
 * `fs/copy` (PROTOCOL.md §4): a file, a symlink as a symlink, or a directory
 * merged into the destination, as the reference copies them.
 */
import { constants, type Dirent, type Stats } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Errors } from '../../protocol/errors.js';
import { systemError } from '../os-error.js';
import { sizesAreHonest } from './honest-sizes.js';
import { inBatches, SIDE_BY_SIDE } from './side-by-side.js';
import { childPath, direntsInOsOrder, type Empty, isUnknownType, mapped, waitsForOtherEnd } from './fs-operations.js';

/** A path below the top of a copy: the bytes of the names as they are on disk (not every name is UTF-8). */
type FsPath = string | Buffer;

export async function copy(source: string, destination: string, recursive: boolean): Promise<Empty> {
  await mapped(async () => {
    const stat = await fs.lstat(source);
    if (stat.isSymbolicLink()) return copySymlink(source, destination);
    if (stat.isFile()) return copyFile(source, destination);
    if (!stat.isDirectory()) throw Errors.copyUnsupportedType();
    if (!recursive) throw Errors.copyDirectoryNeedsRecursive();
    const from = await fs.realpath(source);
    // A destination that is there is judged where it leads (a symlink into the source too).
    const to = await fs.realpath(destination).catch(async () => path.resolve(await realParent(destination), path.basename(destination)));
    if (to === from || to.startsWith(`${from}/`)) throw Errors.copyIntoItself();
    await copyDirectory(source, destination, true);
  });
  return {};
}

/** The destination's parent, resolved, so that "inside the source" is judged on real paths. */
async function realParent(destination: string): Promise<string> {
  return fs.realpath(path.dirname(destination)).catch(() => path.dirname(destination));
}

async function copySymlink(source: FsPath, destination: FsPath): Promise<void> {
  await fs.symlink(await fs.readlink(source, { encoding: 'buffer' }), destination);
}

/**
 * `made` for a name the destination's listing did not show (so it makes the
 * name exclusively, with no look first), else `careful` if the name turned
 * up since (EEXIST: a FIFO a job made, say).
 */
async function newElseCareful<T>(made: () => Promise<T>, careful: () => Promise<T>): Promise<T> {
  try {
    return await made();
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') throw error;
  }
  return careful();
}

/**
 * Replaces a file that is there (through a symlink too), as the reference's
 * copy does. `mayExist` false: the destination's directory did not list the name.
 * `honestSize`: the source's file system reports true sizes (honest-sizes.ts).
 */
function copyFile(source: FsPath, destination: FsPath, mayExist = true, honestSize = false): Promise<void> {
  const careful = async () => {
    const existing = await fs.stat(destination).catch(() => undefined);
    if (existing?.isDirectory()) throw systemError('EISDIR');
    // Its open would wait for a reader for ever, holding a thread of the pool (the reference hangs): refused.
    if (existing && waitsForOtherEnd(existing)) throw Errors.notAFile(destination.toString());
    await copyFileAs(source, destination, existing);
  };
  // A new file cannot be the source itself, and an honest size of 0 is an empty file: nothing to look at first.
  const made = () => (honestSize ? fs.copyFile(source, destination, constants.COPYFILE_EXCL) : copyFileAs(source, destination, 'new'));
  return mayExist ? careful() : newElseCareful(made, careful);
}

/** The copy itself: `onto` is the file it replaces, 'new' for one that must not exist yet. */
async function copyFileAs(source: FsPath, destination: FsPath, onto: Stats | undefined | 'new'): Promise<void> {
  const sourceStat = await fs.stat(source);
  const exclusive = onto === 'new';
  // Copying a file onto itself leaves it untouched (the reference truncates it: Q7).
  if (onto !== undefined && onto !== 'new' && onto.dev === sourceStat.dev && onto.ino === sourceStat.ino) return;
  if (sourceStat.size === 0) {
    // A file that says it is empty (/proc, /sys) may still have content, which the kernel's
    // copy (bounded by that size) would not see: read it to its end, as the reference does.
    await fs.writeFile(destination, await fs.readFile(source), { mode: sourceStat.mode & 0o7777, flag: exclusive ? 'wx' : 'w' });
    return;
  }
  await fs.copyFile(source, destination, exclusive ? constants.COPYFILE_EXCL : 0);
}

/** Makes the destination directory, or takes the one that is there (a symlink to one too); true if made. */
function destinationDirectory(destination: FsPath, top: boolean, mayExist: boolean): Promise<boolean> {
  const careful = async () => {
    const existing = await fs.stat(destination).catch(() => undefined);
    // A symlink that leads nowhere (or round in a loop) is there all the same.
    const inTheWay = existing
      ? !existing.isDirectory()
      : await fs.lstat(destination).then(
          () => true,
          () => false,
        );
    if (inTheWay) throw systemError('EEXIST');
    if (existing) return false;
    await fs.mkdir(destination, { recursive: top });
    return true;
  };
  const make = async () => {
    await fs.mkdir(destination);
    return true;
  };
  return mayExist ? careful() : newElseCareful(make, careful);
}

/**
 * The names in a destination that was there, as latin1 keys (names are
 * bytes), so that a name not among them needs no look first (a miss costs
 * an error object, more than the copy of a small file); undefined where a
 * look per entry is cheaper: a few entries to copy, or a destination
 * listing more than a few times as many.
 */
async function namesPresent(destination: FsPath, entries: number): Promise<Set<string> | undefined> {
  if (entries <= SIDE_BY_SIDE) return undefined;
  const names = new Set<string>();
  const listing = await fs.opendir(destination, { encoding: 'buffer' as BufferEncoding, bufferSize: 128 });
  for await (const dirent of listing as unknown as AsyncIterable<Dirent<Buffer>>) {
    if (names.size > entries * 4) return undefined; // leaving the loop closes the listing
    names.add(dirent.name.toString('latin1'));
  }
  return names;
}

/** A readdir entry's type, looked up where the file system did not give it. */
async function typeOf(dirent: Dirent<Buffer>, from: FsPath): Promise<'file' | 'directory' | 'symlink' | 'other'> {
  const known = isUnknownType(dirent) ? await fs.lstat(from) : dirent;
  if (known.isSymbolicLink()) return 'symlink';
  if (known.isDirectory()) return 'directory';
  return known.isFile() ? 'file' : 'other';
}

/**
 * Merges into a directory that is there (a symlink to one too): files are
 * replaced, a symlink in the way is EEXIST, in the OS's order, stopping at
 * the first error, as the reference does; but files are copied a batch at a
 * time (side-by-side.ts), so those listed after a failure in its batch are
 * copied too. FIFOs, sockets and devices in it are left out, as the
 * reference leaves them. `top`: the destination asked for, made with the
 * directories missing on its way, as the reference makes it.
 */
async function copyDirectory(source: FsPath, destination: FsPath, top = false, mayExist = true): Promise<void> {
  const made = await destinationDirectory(destination, top, mayExist);
  const [dirents, honestSizes] = await Promise.all([direntsInOsOrder(source), sizesAreHonest(source)]);
  const present = made ? new Set<string>() : await namesPresent(destination, dirents.length);
  await inBatches(
    dirents,
    // A directory, or what may be one, alone: its copy is a tree of its own.
    (dirent) => !dirent.isDirectory() && !isUnknownType(dirent),
    async (dirent) => {
      const from = childPath(source, dirent.name);
      const to = childPath(destination, dirent.name);
      const there = present?.has(dirent.name.toString('latin1')) ?? true;
      const type = await typeOf(dirent, from);
      if (type === 'symlink') await copySymlink(from, to);
      else if (type === 'directory') await copyDirectory(from, to, false, there);
      else if (type === 'file') await copyFile(from, to, there, honestSizes);
    },
  );
}
