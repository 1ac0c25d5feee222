/**
 * Puts one process's events back in seq order (§3.3): an event waits until
 * every lower seq has been published; duplicates and seqs already published
 * are dropped. Notifications may arrive out of order over some transports;
 * consumers must still see 1, 2, 3, ….
 */
export class SeqOrderer<E extends { seq: number }> {
  private next = 1;
  private readonly waiting = new Map<number, E>();

  constructor(private readonly publish: (event: E) => void) {}

  /** The highest seq published so far. */
  get publishedThrough(): number {
    return this.next - 1;
  }

  /** Whether the event with this seq has been published or is waiting for its turn. */
  has(seq: number): boolean {
    return seq < this.next || this.waiting.has(seq);
  }

  push(event: E): void {
    if (event.seq < this.next || this.waiting.has(event.seq)) return;
    if (event.seq > this.next) {
      this.waiting.set(event.seq, event);
      return;
    }
    this.publish(event);
    this.next++;
    for (let queued = this.waiting.get(this.next); queued; queued = this.waiting.get(this.next)) {
      this.waiting.delete(this.next);
      this.publish(queued);
      this.next++;
    }
  }
}
