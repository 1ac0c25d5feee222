/**
 * The output a command session has produced since its last `exec` call
 * returned. It is kept as `HeadTail` keeps it, in bounded memory, so that
 * output piling up between two calls comes out as output during one call
 * does: head and tail, the middle cut and marked, no character split.
 */
import { HeadTail } from './head-tail.js';

export class SessionOutput {
  private collected: HeadTail;
  private waiters: Array<() => void> = [];

  constructor(private readonly limit: number) {
    this.collected = new HeadTail(limit);
  }

  push(chunk: Buffer): void {
    this.collected.push(chunk);
  }

  /**
   * The text collected since the last take. `keepIncompleteEnd`: an
   * unfinished character at the end is held back for the next take, when
   * the rest of its bytes will have come.
   */
  take(keepIncompleteEnd: boolean): string {
    const taken = this.collected;
    this.collected = new HeadTail(this.limit);
    if (keepIncompleteEnd) this.collected.push(taken.takeIncompleteEnd());
    return taken.text();
  }

  /** Resolves when `wake` is called (the session ended), or after `ms`. */
  waitForEnd(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter !== done);
        resolve();
      }, ms);
      this.waiters.push(done);
    });
  }

  wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
}
