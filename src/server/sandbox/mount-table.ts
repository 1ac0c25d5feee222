/**
 * Which paths are mount points in a mount namespace other than this
 * process's: the sandboxes of other servers. Removing such a directory here
 * would unmount it there (`synthetic-mounts.ts`). Read from every process's
 * /proc/<pid>/mountinfo, one per namespace where the namespace can be told.
 */
import fs from 'node:fs';

/** The subset of `paths` mounted on in another mount namespace. */
export function mountedElsewhere(paths: string[]): Set<string> {
  const wanted = new Set(paths);
  const found = new Set<string>();
  const ours = namespaceOf('self');
  const seen = new Set<string>();
  for (const pid of processIds()) {
    const namespace = namespaceOf(pid);
    if (namespace === ours && ours !== undefined) continue;
    if (namespace !== undefined) {
      if (seen.has(namespace)) continue;
      seen.add(namespace);
    }
    for (const mountPoint of mountPointsOf(pid)) if (wanted.has(mountPoint)) found.add(mountPoint);
  }
  return found;
}

function processIds(): string[] {
  try {
    return fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
}

function namespaceOf(pid: string): string | undefined {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/mnt`);
  } catch {
    return undefined; // gone, or not ours to look at: its mount table is read anyway
  }
}

/** The mount points in `pid`'s mount table (the fifth field, octal escapes undone). */
function mountPointsOf(pid: string): string[] {
  let table: string;
  try {
    table = fs.readFileSync(`/proc/${pid}/mountinfo`, 'utf8');
  } catch {
    return [];
  }
  return table
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((field): field is string => field !== undefined)
    .map((field) => field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8))));
}
