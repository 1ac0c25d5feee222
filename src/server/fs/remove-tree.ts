/**
 * A recursive `fs/remove` of a directory, as the reference's (Rust's
 * `remove_dir_all`): depth first in the order the directory lists them, the
 * first failure ending it with that call's error. Unlike the reference, a
 * directory's files are unlinked a batch at a time (side-by-side.ts), so a
 * failure may find the files listed after it in its batch gone too.
 * Node's `fs.rm` removes entries side by side, answers at the first failure
 * while the others go on, removes whatever it can, and reports an EPERM from
 * `unlink` as the ENOTDIR of its retry.
 *
 * The tree may be changed while it is removed, by whatever runs in it: a
 * directory swapped for a symlink must not lead the removal elsewhere. Rust
 * holds each directory open and works inside it (`openat` with O_NOFOLLOW,
 * `unlinkat`); Node has no such calls, so each entry is named through its
 * open directory, `/proc/self/fd/<fd>/<name>`, which the kernel resolves
 * from that directory and not from its path. That also keeps every path
 * short, however deep the tree, and names are kept as bytes (a name that is
 * not UTF-8 must not turn into another's).
 */
import { constants, type Dirent, existsSync } from 'node:fs';
import fs, { type FileHandle } from 'node:fs/promises';
import { inBatches, SIDE_BY_SIDE } from './side-by-side.js';

const OPEN_DIRECTORY = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const FD_PATHS = '/proc/self/fd';

const codeOf = (error: unknown): string | undefined => (error as { code?: string }).code;
/** Entries that went while the tree was being removed are not an error (as the reference). */
const isGone = (error: unknown): boolean => codeOf(error) === 'ENOENT';
/** What an open with O_NOFOLLOW and O_DIRECTORY says of a symlink or a file. */
const isNotADirectory = (error: unknown): boolean => codeOf(error) === 'ENOTDIR' || codeOf(error) === 'ELOOP';

/** `name` inside the directory open as `directory`, resolved by the kernel from that directory. */
const inside = (directory: FileHandle, name: Buffer): Buffer => Buffer.concat([Buffer.from(`${FD_PATHS}/${directory.fd}/`), name]);

/** The entries of the open `directory`, names as bytes (Node takes `encoding: 'buffer'` here; its types leave it out). */
async function listing(directory: FileHandle): Promise<AsyncIterable<Dirent<Buffer>>> {
  const options = { encoding: 'buffer' as BufferEncoding, bufferSize: SIDE_BY_SIDE };
  return (await fs.opendir(`${FD_PATHS}/${directory.fd}`, options)) as unknown as AsyncIterable<Dirent<Buffer>>;
}

/** Removes what is in the open `directory`: its files side by side, its directories one at a time. */
async function removeContents(directory: FileHandle): Promise<void> {
  await inBatches(
    await listing(directory),
    (entry) => !mayBeDirectory(entry),
    (entry) => removeEntry(directory, entry).catch(unlessGone),
  );
}

function unlessGone(error: unknown): void {
  if (!isGone(error)) throw error;
}

/** A type the listing does not give (some file systems) is found out by trying to open a directory. */
const mayBeDirectory = (entry: Dirent<Buffer>): boolean => entry.isDirectory() || !(entry.isFile() || entry.isSymbolicLink());

function removeEntry(directory: FileHandle, entry: Dirent<Buffer>): Promise<void> {
  const target = inside(directory, entry.name);
  return mayBeDirectory(entry) ? removeDirectory(target, true) : fs.unlink(target);
}

/**
 * Opens `target` as a directory, never through a symlink, empties it and
 * removes it. A child that turns out to be no directory (a symlink swapped
 * in) is unlinked instead, as the reference does; the top one fails.
 */
async function removeDirectory(target: string | Buffer, isChild: boolean): Promise<void> {
  let directory: FileHandle;
  try {
    directory = await fs.open(target, OPEN_DIRECTORY);
  } catch (error) {
    if (isChild && isNotADirectory(error)) return fs.unlink(target);
    throw error;
  }
  try {
    await removeContents(directory);
  } finally {
    await directory.close();
  }
  await fs.rmdir(target).catch(unlessGone);
}

/** Removes `directory` and everything under it; rejects with the first OS error. */
export async function removeTree(directory: string): Promise<void> {
  // Without /proc (a rare container), Node's own removal, with its differences.
  if (!existsSync(FD_PATHS)) return fs.rm(directory, { recursive: true, force: false });
  await removeDirectory(directory, false);
}
