/**
 * Closes descriptors the server inherited from its parent (other than
 * stdio), so children cannot inherit them either: node:child_process keeps
 * every descriptor that lacks close-on-exec, and children must see only
 * fds 0-2 (§3.2). Node and libuv open everything with O_CLOEXEC, so a
 * descriptor without that flag at start-up came from outside. Linux only.
 */
import fs from 'node:fs';
import { readProcHead } from '../server/process/proc-files.js';

const O_CLOEXEC = 0o2000000;

export function closeInheritedDescriptors(): number[] {
  const closed: number[] = [];
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc/self/fd');
  } catch {
    return closed;
  }
  for (const entry of entries) {
    const fd = Number(entry);
    if (fd <= 2) continue;
    try {
      const flags = /^flags:\s*([0-7]+)/m.exec(readProcHead(`/proc/self/fdinfo/${fd}`) ?? '')?.[1];
      if (flags === undefined || (parseInt(flags, 8) & O_CLOEXEC) !== 0) continue;
      fs.closeSync(fd);
      closed.push(fd);
    } catch {
      // the directory listing's own descriptor, or already closed
    }
  }
  return closed;
}
