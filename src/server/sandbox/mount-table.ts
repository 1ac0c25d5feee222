/**
 * Which paths are mount points in a mount namespace other than this
 * process's: the sandboxes of other servers. Removing such a directory here
 * would unmount it there (`synthetic-mounts.ts`). Read from every process's
 * /proc/<pid>/mountinfo, one per namespace where the namespace can be told.
 * Two forms of the same reading: off the event loop (the server's, as a
 * removal must not hold up the requests behind it), and at once (at exit).
 */
import fs from 'node:fs';

const PROC = '/proc';
const isPid = (name: string) => /^\d+$/.test(name);
const namespacePath = (pid: string) => `${PROC}/${pid}/ns/mnt`;
const tablePath = (pid: string) => `${PROC}/${pid}/mountinfo`;
const missing = () => undefined; // gone, or not ours to look at

/** The subset of `paths` mounted on in another mount namespace, read without blocking the loop. */
export async function mountedElsewhereSoon(paths: string[]): Promise<Set<string>> {
  const pids = (await fs.promises.readdir(PROC).catch(() => [] as string[])).filter(isPid);
  const ours = await fs.promises.readlink(namespacePath('self')).catch(missing);
  const namespaces = await Promise.all(pids.map((pid) => fs.promises.readlink(namespacePath(pid)).catch(missing)));
  const readers = tablesToRead(pids, namespaces, ours);
  const tables = await Promise.all(readers.map((pid) => fs.promises.readFile(tablePath(pid), 'utf8').catch(() => '')));
  return mountedIn(tables, paths);
}

/** The same, at once: for the exit, when nothing asynchronous runs any more. */
export function mountedElsewhere(paths: string[]): Set<string> {
  const at = <T>(read: () => T): T | undefined => {
    try {
      return read();
    } catch {
      return undefined;
    }
  };
  const pids = (at(() => fs.readdirSync(PROC)) ?? []).filter(isPid);
  const ours = at(() => fs.readlinkSync(namespacePath('self')));
  const namespaces = pids.map((pid) => at(() => fs.readlinkSync(namespacePath(pid))));
  const tables = tablesToRead(pids, namespaces, ours).map((pid) => at(() => fs.readFileSync(tablePath(pid), 'utf8')) ?? '');
  return mountedIn(tables, paths);
}

/**
 * The processes whose mount tables to read: one per namespace other than
 * ours, and every one whose namespace cannot be told (its table is read
 * anyway).
 */
function tablesToRead(pids: string[], namespaces: Array<string | undefined>, ours: string | undefined): string[] {
  const seen = new Set<string>();
  return pids.filter((_pid, index) => {
    const namespace = namespaces[index];
    if (namespace === undefined) return true;
    if ((namespace === ours && ours !== undefined) || seen.has(namespace)) return false;
    seen.add(namespace);
    return true;
  });
}

/** The `paths` that are a mount point (the fifth field, octal escapes undone) in any of `tables`. */
function mountedIn(tables: string[], paths: string[]): Set<string> {
  const wanted = new Set(paths);
  const found = new Set<string>();
  for (const table of tables) {
    for (const line of table.split('\n')) {
      const field = line.split(' ')[4];
      if (field === undefined) continue;
      const mountPoint = field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
      if (wanted.has(mountPoint)) found.add(mountPoint);
    }
  }
  return found;
}
