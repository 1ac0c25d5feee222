/**
 * How many bytes of file contents and HTTP bodies a connection may hold in
 * answers its client has not taken yet. `fs/readFile` reserves a file's size
 * before it reads it, a buffered `http/request` reserves its body as it comes
 * in, and both give it back once the line writer has sent the answer, so that
 * a client asking for many large answers without reading them holds the
 * server to about this much (the input hold, `input-hold.ts`, bounds only how
 * many requests are read, not how large their answers are).
 */

/** Enough for any client that reads its answers; a larger file waits until it is the only one held. */
export const ANSWER_BUDGET_BYTES = 64 * 1024 * 1024;

/** A reservation that grows as a body of unknown length comes in (see `AnswerBudget.growing`). */
export interface GrowingReservation {
  /**
   * Resolves once `bytes` more are held: at once when they fit, or when this
   * is the oldest reservation still held (so that the oldest body always
   * completes, and two half-read bodies never wait for each other). Rejects
   * with `signal`'s reason if it aborts first.
   */
  grow(bytes: number, signal?: AbortSignal): Promise<void>;
  /** Gives back everything held (once, however often called). */
  release(): void;
}

interface Waiter {
  fits(): boolean;
  grant(): void;
}

/** A growth waits with the reservation it grows, and fails if that reservation is released first. */
interface Growth extends Waiter {
  id: number;
  fail(reason: unknown): void;
}

export class AnswerBudget {
  private held = 0;
  /** Bytes held by each live reservation, by number, oldest first (a Map keeps insertion order). */
  private readonly live = new Map<number, number>();
  private nextId = 0;
  /** Whole reservations, granted in the order asked. */
  private readonly waiting: Waiter[] = [];
  /** Growths of reservations already held: they never wait behind a whole reservation. */
  private readonly growths: Growth[] = [];

  constructor(private readonly limitBytes: number) {}

  /** Bytes reserved and not yet given back. */
  get reserved(): number {
    return this.held;
  }

  /**
   * Resolves, in the order asked, once `bytes` fit (or nothing else is
   * held), with the function that gives them back (once, however often called).
   */
  reserve(bytes: number): Promise<() => void> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        fits: () => this.held === 0 || this.held + bytes <= this.limitBytes,
        grant: () => {
          const id = this.admit();
          this.add(id, bytes);
          resolve(once(() => this.free(id)));
        },
      };
      if (this.waiting.length === 0 && waiter.fits()) waiter.grant();
      else this.waiting.push(waiter);
    });
  }

  /** A reservation of nothing yet, held from now on, that grows as its bytes come in. */
  growing(): GrowingReservation {
    const id = this.admit();
    return {
      grow: (bytes, signal) => this.grow(id, bytes, signal),
      release: once(() => this.free(id)),
    };
  }

  private grow(id: number, bytes: number, signal: AbortSignal | undefined): Promise<void> {
    if (!this.live.has(id)) return Promise.reject(new Error('the reservation was released'));
    return new Promise((resolve, reject) => {
      const onAbort = () => growth.fail(signal?.reason);
      const growth: Growth = {
        id,
        fits: () => this.held + bytes <= this.limitBytes || this.oldest() === id,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          this.add(id, bytes);
          resolve();
        },
        fail: (reason) => {
          signal?.removeEventListener('abort', onAbort);
          const at = this.growths.indexOf(growth);
          if (at >= 0) this.growths.splice(at, 1);
          reject(reason);
        },
      };
      if (signal?.aborted) return onAbort();
      if (growth.fits()) return growth.grant();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.growths.push(growth);
    });
  }

  private admit(): number {
    const id = this.nextId++;
    this.live.set(id, 0);
    return id;
  }

  private add(id: number, bytes: number): void {
    this.live.set(id, (this.live.get(id) ?? 0) + bytes);
    this.held += bytes;
  }

  private free(id: number): void {
    this.held -= this.live.get(id) ?? 0;
    this.live.delete(id);
    for (const growth of this.growths.filter((g) => g.id === id)) growth.fail(new Error('the reservation was released'));
    this.grantWaiting();
  }

  private oldest(): number | undefined {
    return this.live.keys().next().value;
  }

  private grantWaiting(): void {
    // Each grant holds more: whether the next fits is asked after it.
    for (const growth of [...this.growths]) {
      if (!growth.fits()) continue;
      this.growths.splice(this.growths.indexOf(growth), 1);
      growth.grant();
    }
    while (this.waiting.length > 0 && this.waiting[0]!.fits()) this.waiting.shift()!.grant();
  }
}

function once(action: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    action();
  };
}
