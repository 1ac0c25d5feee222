/**
 * A recursive `fs/remove` of a directory, as the reference's (Rust's
 * `remove_dir_all`): depth first, one entry at a time in the order the
 * directory lists them, a symlink removed and never followed, and the first
 * failure ends it with that call's error. Node's `fs.rm` does otherwise: it
 * removes the entries side by side and answers at the first failure while
 * the others go on, removes whatever it can, and reports an EPERM from
 * `unlink` as the ENOTDIR of its retry.
 */
import type { Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Entries that went while the tree was being removed are not an error (as the reference). */
const isGone = (error: unknown): boolean => (error as { code?: string }).code === 'ENOENT';

/** A file system that does not say an entry's type in its listing leaves it to `lstat`. */
const typeUnknown = (entry: Dirent): boolean =>
  !entry.isFile() &&
  !entry.isDirectory() &&
  !entry.isSymbolicLink() &&
  !entry.isFIFO() &&
  !entry.isSocket() &&
  !entry.isBlockDevice() &&
  !entry.isCharacterDevice();

async function removeEntry(directory: string, entry: Dirent): Promise<void> {
  const target = path.join(directory, entry.name);
  try {
    if (entry.isDirectory() || (typeUnknown(entry) && (await fs.lstat(target)).isDirectory())) await removeTree(target);
    else await fs.unlink(target);
  } catch (error) {
    if (!isGone(error)) throw error;
  }
}

/** Removes `directory` and everything under it; rejects with the first OS error. */
export async function removeTree(directory: string): Promise<void> {
  // opendir, not readdir: it lists entries in the directory's own order, which libuv's scandir sorts.
  const listing = await fs.opendir(directory);
  for await (const entry of listing) await removeEntry(directory, entry);
  await fs.rmdir(directory);
}
