/**
 * The seq rules a process's events must keep (§3.3): one `exited` and one
 * `closed`, each on a seq no other event has. A server that breaks them
 * would hang its session (a seq taken twice never fills its gap) or deliver
 * two exits.
 */

type Sequenced = { type: 'output' | 'exited' | 'closed'; seq: number };

export class SeqRules {
  private readonly ends: { exited?: number; closed?: number } = {};

  /** An `exited` event has arrived (published, or waiting for its seq). */
  get exitArrived(): boolean {
    return this.ends.exited !== undefined;
  }

  /** What is wrong with `event` (`seen`: the seqs earlier events have), or undefined; it runs per event. */
  fault({ type, seq }: Sequenced, seen: { has(seq: number): boolean }): string | undefined {
    if (type === 'output') {
      const owner = this.ends.exited === seq ? 'exited' : this.ends.closed === seq ? 'closed' : undefined;
      return owner ? `output came with seq ${seq}, which ${owner} has` : undefined;
    }
    const earlier = this.ends[type];
    if (earlier === seq) return undefined; // the same event again (a resume reads again what it had)
    if (earlier !== undefined) return `${type} came twice, with seq ${earlier} and ${seq}`;
    if (seen.has(seq)) return `${type} came with seq ${seq}, which an earlier event has`;
    this.ends[type] = seq;
    return undefined;
  }
}
