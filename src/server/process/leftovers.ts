/**
 * The leaders of closed processes, whose groups and sessions may still hold
 * what they left running (`sleep 60 >/dev/null &`, a job a shell moved to
 * another group): the end of a session kills those too, as it kills the
 * processes still open. Kept apart from the processes themselves, which are
 * forgotten once their retention passes.
 */
import type { Guardian } from './guardian.js';
import { killLeftovers } from './kill.js';

/** Past this many leaders, those whose groups are empty are dropped (bounded memory in a long session). */
const PRUNE_FROM = 1024;

function groupHasMembers(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The guardian is told of each (`Guardian.reap`), so that what they left is
 * killed even if the server itself is killed, and forgets them with them.
 */
export class ReapedLeaders {
  private readonly ids = new Set<number>();
  private pruneAt = PRUNE_FROM;
  /** Set by `killAll`: the session is ending, and leaders reaped from then on are swept at once. */
  private ending = false;
  private sweep: NodeJS.Immediate | undefined;

  constructor(private readonly guardian: Pick<Guardian, 'reap' | 'forget'>) {}

  add(pid: number): void {
    this.ids.add(pid);
    this.guardian.reap(pid);
    // The processes killed at the end close after the sweep: theirs, in one pass for all of them.
    if (this.ending) this.sweep ??= setImmediate(() => this.killAll());
    if (this.ids.size <= this.pruneAt) return;
    // An empty group can only come back as a stranger's. (A job moved to another group of the
    // session is missed here once its leader's group is empty: the bound's price.)
    const empty = [...this.ids].filter((id) => !groupHasMembers(id));
    for (const id of empty) this.ids.delete(id);
    this.guardian.forget(empty);
    this.pruneAt = Math.max(PRUNE_FROM, 2 * this.ids.size);
  }

  /** SIGKILLs what each leader left in its group and session, unless a stranger took the number since. */
  killAll(): void {
    this.ending = true;
    this.sweep = undefined;
    killLeftovers(this.ids);
    this.guardian.forget(this.ids);
    this.ids.clear();
  }
}
