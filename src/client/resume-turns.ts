/**
 * Calls that wait for a dropped connection to be replaced go on in the
 * order they were made, not in the order they began to wait: a write in
 * flight at the drop learns of it after a later write has begun waiting,
 * and must still be sent first (stdin would be reordered otherwise); and a
 * call made once the connection is back waits for the earlier ones let go.
 */
export class ResumeTurns {
  private next = 0;
  private waiting: Array<{ turn: number; go: () => void }> = [];
  /** Calls let go by `release` and not sent yet. */
  private readonly releasedUnsent = new Set<number>();

  /** A number for a call, in the order calls are made. */
  take(): number {
    return this.next++;
  }

  /** Whether a call made before `turn` was let go and is not sent yet: `turn` goes after it. */
  mustWait(turn: number): boolean {
    for (const earlier of this.releasedUnsent) if (earlier < turn) return true;
    return false;
  }

  /** Resolves at `release`, after every waiting call that was made before `turn`. */
  wait(turn: number): Promise<void> {
    return new Promise((go) => this.waiting.push({ turn, go }));
  }

  /** The connection is replaced (or given up on): the waiting calls go on, in their order. */
  release(): void {
    const waiting = this.waiting.splice(0).sort((a, b) => a.turn - b.turn);
    for (const { turn } of waiting) this.releasedUnsent.add(turn);
    for (const { go } of waiting) go();
  }

  /** `turn` was sent (or failed before): once every call let go was, those that waited behind them go. */
  sent(turn: number): void {
    if (this.releasedUnsent.delete(turn) && this.releasedUnsent.size === 0 && this.waiting.length > 0) this.release();
  }
}
