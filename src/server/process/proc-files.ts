/**
 * The head of a small /proc file (`stat`, `fdinfo`), read into one buffer:
 * no fstat and no allocation per file, unlike readFileSync, which made the
 * scans that read one such file per process or per descriptor several times
 * slower. The fields wanted sit in the first lines.
 */
import fs from 'node:fs';

const HEAD_BYTES = 1024;
const head = Buffer.alloc(HEAD_BYTES);

/** Up to the first KiB of `file` as latin1 text; undefined if it cannot be read (a process or descriptor gone). */
export function readProcHead(file: string): string | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    return head.toString('latin1', 0, fs.readSync(fd, head, 0, HEAD_BYTES, null));
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}
