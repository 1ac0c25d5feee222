/**
 * EXT-CONCURRENCY (PROTOCOL.md): requests start in arrival order, and only a
 * `process/read` long-poll and an `http/request` may finish out of order.
 * Every other request, and every notification, runs once the ordered work
 * before it has finished, so that a write is on disk before the read behind
 * it runs and answers leave in order. Block reads (`fs/readBlock`) in a row
 * run side by side, as a client streaming a file keeps several in flight,
 * and are still answered in order. A request that may overtake runs once
 * everything before it has started.
 */
/** Everything so far has started: one settled promise for every request that starts at once (the common case). */
const STARTED: Promise<void> = Promise.resolve();

export class RequestOrder {
  /** Ordered tasks not finished yet. */
  private pending = 0;
  /** Settles when the last ordered task has finished. */
  private finished: Promise<void> = STARTED;
  /** Settles when the last ordered task has started. */
  private started: Promise<void> = STARTED;
  /** Whether the last ordered task is shareable and running. */
  private tailShared = false;

  /**
   * Runs `task` once the ordered tasks before it have finished (at once when
   * there are none). A `shareable` task (a read that changes nothing) starts
   * beside a shareable one under way before it, and still finishes after it.
   */
  ordered<T>(task: () => Promise<T>, shareable = false): Promise<T> {
    let result: Promise<T>;
    const startNow = this.pending === 0 || (shareable && this.tailShared);
    if (startNow) {
      const running = task();
      if (this.pending === 0) result = running;
      else {
        // A shared task may fail before the one ahead of it finishes: its rejection is passed on then, not lost as unhandled.
        running.catch(() => undefined);
        result = this.finished.then(() => running);
      }
      this.started = STARTED;
    } else {
      let markStarted!: () => void;
      this.started = new Promise<void>((resolve) => (markStarted = resolve));
      result = this.finished.then(() => {
        markStarted();
        return task();
      });
    }
    this.tailShared = shareable && startNow;
    this.pending++;
    this.finished = result.then(this.done, this.done);
    return result;
  }

  private readonly done = (): void => {
    this.pending--;
  };

  /** Runs `task` once every task before it has started (at once when none is waiting). */
  overtaking<T>(task: () => Promise<T>): Promise<T> {
    return this.pending === 0 ? task() : this.started.then(task);
  }
}
