/**
 * Calls that wait for a dropped connection to be replaced go on in the
 * order they were made, not in the order they began to wait: a write in
 * flight at the drop learns of it after a later write has begun waiting,
 * and must still be sent first (stdin would be reordered otherwise).
 */
export class ResumeTurns {
  private next = 0;
  private waiting: Array<{ turn: number; go: () => void }> = [];

  /** A number for a call, in the order calls are made. */
  take(): number {
    return this.next++;
  }

  /** Resolves once `relinking` has settled, after every waiting call that was made before `turn`. */
  after(relinking: Promise<void>, turn: number): Promise<void> {
    return new Promise((go) => {
      this.waiting.push({ turn, go });
      if (this.waiting.length === 1) void relinking.then(() => this.release());
    });
  }

  private release(): void {
    const waiting = this.waiting.splice(0).sort((a, b) => a.turn - b.turn);
    for (const { go } of waiting) go();
  }
}
