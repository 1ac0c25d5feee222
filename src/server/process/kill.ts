/**
 * Killing whole process trees. Every child leads its own process group (and,
 * under a PTY, its own session), so one `kill(-pgid)` reaches every
 * descendant that stayed in the group. An interactive shell under a PTY moves
 * its jobs into other groups of the same session; `killSession` finds those
 * through /proc.
 */
import fs from 'node:fs';
import { readProcHead } from './proc-files.js';

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

/** Field 6 (session) of /proc/<pid>/stat, after the `(comm)` (whose name may hold spaces and parentheses). */
function sessionOf(pid: string): number | undefined {
  const stat = readProcHead(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[3]);
}

/** Without /proc (not Linux) nothing can tell whose a number is: such numbers are left alone. */
const HAS_PROC = fs.existsSync('/proc/self/stat');

/**
 * Whether `id`, the pid of a leader that was reaped, may stand for its group and session: the
 * kernel keeps the number while any process is in that group or session, so a live process with
 * that pid is a stranger, whose group and session took the number after ours were empty.
 */
const stillOurs = (id: number): boolean => HAS_PROC && !fs.existsSync(`/proc/${id}`);

/** SIGKILLs every process whose session id is one of `sids` (Linux; a no-op elsewhere), in one pass over /proc. */
function killSessionMembers(sids: ReadonlySet<number>): void {
  if (sids.size === 0) return;
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return;
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    const sid = sessionOf(entry);
    if (sid === undefined || !sids.has(sid)) continue;
    try {
      process.kill(Number(entry), 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** SIGKILLs every process whose session id is `sid` (Linux; a no-op elsewhere), and the leader while it is not reaped. */
export function killSession(sid: number, leaderAlive = false): void {
  if (!leaderAlive && !stillOurs(sid)) return;
  signalChild(sid, 'SIGKILL', leaderAlive);
  killSessionMembers(new Set([sid]));
}

/**
 * What children left behind after they were reaped (a `sleep 60 &` with its output sent
 * elsewhere, a job a shell moved to another group): their groups and sessions are killed,
 * unless a stranger has taken the number since.
 */
export function killLeftovers(reapedLeaders: Iterable<number>): void {
  const sids = new Set<number>();
  for (const id of reapedLeaders) {
    if (!stillOurs(id)) continue;
    killGroup(id);
    sids.add(id);
  }
  killSessionMembers(sids);
}
