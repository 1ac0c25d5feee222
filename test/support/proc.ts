/**
 * Process facts from /proc. PID 1 here does not reap orphans, so a killed
 * process may linger as a zombie: "alive" means present and not state Z.
 */
import fs from 'node:fs';

function procState(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

export function isAlive(pid: number): boolean {
  const state = procState(pid);
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** Polls /proc until none of `pids` is alive (the kernel gives no event for another's death). */
export async function waitDead(pids: number[], timeoutMs = 5000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const alive = pids.filter(isAlive);
    if (alive.length === 0 || Date.now() > deadline) return alive;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Polls /proc until `pid` sleeps in the kernel function matching `wchan` (e.g. writing to a full pipe); false if it died or the time passed. */
export async function waitBlockedIn(pid: number, wchan: RegExp, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let where: string;
    try {
      where = fs.readFileSync(`/proc/${pid}/wchan`, 'latin1');
    } catch {
      return false;
    }
    if (wchan.test(where)) return true;
    if (Date.now() > deadline || !isAlive(pid)) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Live processes whose command line contains `marker` (to find a test's
 * children), optionally only those whose argv[0] is `program`.
 */
export function findByCmdline(marker: string, program?: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'latin1');
      if (!cmdline.includes(marker) || !isAlive(Number(entry))) continue;
      if (program === undefined || cmdline.split('\0')[0] === program) found.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/** Polls until `count` processes match (a forked child may not have exec'd yet). */
export async function waitFound(marker: string, program: string, count = 1, timeoutMs = 5000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = findByCmdline(marker, program);
    if (found.length >= count || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Live processes whose environment holds the entry `entry` (inherited by every descendant). */
export function findByEnviron(entry: string): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const environ = fs.readFileSync(`/proc/${name}/environ`, 'latin1');
      if (environ.split('\0').includes(entry) && isAlive(Number(name))) found.push(Number(name));
    } catch {
      // exited meanwhile, or not ours to read
    }
  }
  return found;
}

/** The live children of `pid` (from /proc; the guardian and the spawner show up here). */
export function childrenOf(pid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((child) => {
      try {
        const stat = fs.readFileSync(`/proc/${child}/stat`, 'latin1');
        const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return state !== 'Z' && Number(ppid) === pid;
      } catch {
        return false;
      }
    });
}

/** The pid of the process running `program` with `marker` in its args, once it has exec'd. */
export async function execedAs(program: string, marker: string): Promise<number> {
  for (let attempt = 0; attempt < 250; attempt++) {
    for (const pid of findByCmdline(marker)) {
      const argv0 = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0')[0];
      if (argv0 === program) return pid;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no ${program} ${marker}`);
}

/**
 * A process's open fds once start-up is over: right after exec the dynamic
 * loader and locale setup briefly open fd 3 themselves. An inherited fd stays
 * open, so a real leak still shows after the wait.
 */
export async function settledFds(pid: number): Promise<string[]> {
  let fds: string[] = [];
  for (let attempt = 0; attempt < 100; attempt++) {
    fds = fs.readdirSync(`/proc/${pid}/fd`).sort();
    if (fds.length === 3) return fds;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return fds;
}

/** A memory figure of `pid` from /proc/<pid>/status (`VmRSS`, `VmHWM`, `VmSize`), in bytes. */
export function memoryBytes(pid: number, field: 'VmRSS' | 'VmHWM' | 'VmSize'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'latin1');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
}
