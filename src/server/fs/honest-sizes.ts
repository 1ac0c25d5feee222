/**
 * Whether the files of a directory report their true sizes. /proc, /sys and
 * their kin report 0 bytes for files with content, which a copy must read
 * to their end (as the reference does); on the file systems below a size
 * is the content's, so a copy need not look at each source file first
 * (`npm run bench -- --only trees`: the look cost about a third of a wide
 * copy). Any other file system, or one we cannot ask, gets the look.
 */
import fs from 'node:fs/promises';

/** statfs(2) magic numbers of file systems whose files' sizes are their contents'. */
const HONEST = new Set([
  0xef53, // ext2, ext3, ext4
  0x01021994, // tmpfs
  0x858458f6, // ramfs
  0x58465342, // xfs
  0x9123683e, // btrfs
  0x794c7630, // overlayfs
  0x2fc12fc1, // zfs
  0xf2f52010, // f2fs
  0x6969, // nfs
  0x73717368, // squashfs
  0xe0f5e1e2, // erofs
]);

/** True when the file system holding `directory` is known to report true sizes. */
export async function sizesAreHonest(directory: string | Buffer): Promise<boolean> {
  try {
    return HONEST.has((await fs.statfs(directory)).type);
  } catch {
    return false;
  }
}
