/**
 * Killing whole process trees. Every child leads its own process group (and,
 * under a PTY, its own session), so one `kill(-pgid)` reaches every
 * descendant that stayed in the group. An interactive shell under a PTY moves
 * its jobs into other groups of the same session; `killSession` finds those
 * through /proc.
 */
import fs from 'node:fs';

/** Sends `signal` to process group `pgid`; a group that is gone is not an error. */
export function killGroup(pgid: number, signal: NodeJS.Signals = 'SIGKILL'): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Signals a child's group; right after fork the child may not have made its
 * group yet (setsid runs in the child), so a leader not yet reaped is then
 * signalled itself. Never for a reaped leader: its pid may belong to a stranger.
 */
export function signalChild(pid: number, signal: NodeJS.Signals, leaderAlive: boolean): void {
  if (killGroup(pid, signal) || !leaderAlive) return;
  try {
    process.kill(pid, signal);
  } catch {
    // gone meanwhile
  }
}

/** Fields 4 (ppid) to 6 (session) of /proc/<pid>/stat, after the `(comm)`. */
function sessionOf(pid: string): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[3]);
  } catch {
    return undefined;
  }
}

/** SIGKILLs every process whose session id is `sid` (Linux; a no-op elsewhere), and the leader while it is not reaped. */
export function killSession(sid: number, leaderAlive = false): void {
  signalChild(sid, 'SIGKILL', leaderAlive);
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return;
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    if (sessionOf(entry) !== sid) continue;
    try {
      process.kill(Number(entry), 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
