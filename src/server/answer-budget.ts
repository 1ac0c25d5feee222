/**
 * How many bytes of file contents and HTTP bodies a connection may hold in
 * answers its client has not taken yet. `fs/readFile` reserves a file's size
 * before it reads it; a buffered `http/request` body is held once it is read
 * whole, and reads on between its chunks only while there is room (see
 * `whenRoom`). Both are given back once the line writer has sent the answer,
 * so that a client asking for many large answers without reading them holds
 * the server to about this much (the input hold, `input-hold.ts`, bounds only
 * how many requests are read, not how large their answers are).
 *
 * A body still coming in holds nothing that a file read waits for: how
 * long it takes is up to the remote server, and nothing may wait for that (a
 * file read waiting for a slow body would hold every ordered request behind
 * it). But bodies coming in side by side count against one another
 * (`arriving`), so that a hundred large bodies requested at once are not all
 * held whole at once; one waits on the others' remotes for `REMOTE_WAIT_MS`
 * at most.
 */

import { waitForWake, wakeAll } from './wait-for-wake.js';

/** How long a body coming in waits on the others' remote servers, with nothing held for the client, before it reads on. */
const REMOTE_WAIT_MS = 1000;

export class AnswerBudget {
  private held = 0;
  /**
   * What each answer held now holds (see `hasRoom`). Not kept for a budget
   * without a limit: an in-process executor's answers are never given back.
   */
  private readonly answers: number[] | undefined;
  private readonly waiting: { bytes: number; grant: () => void }[] = [];
  private readonly roomWaiters = new Set<() => void>();
  /** The bytes read so far of each buffered body still coming in. */
  private readonly incoming = new Map<symbol, number>();
  /** Bodies that waited `REMOTE_WAIT_MS` on the others with nothing held: they read on while nothing is. */
  private readonly waitedOut = new Set<symbol>();

  constructor(private readonly limitBytes: number) {
    this.answers = Number.isFinite(limitBytes) ? [] : undefined;
  }

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
      const grant = () => resolve(this.hold(bytes));
      if (this.waiting.length === 0 && this.fits(bytes)) grant();
      else this.waiting.push({ bytes, grant });
    });
  }

  /** Holds `bytes` at once, whatever is held already (a body already read); returns what gives them back (once). */
  hold(bytes: number): () => void {
    this.held += bytes;
    this.answers?.push(bytes);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.held -= bytes;
      this.answers?.splice(this.answers.indexOf(bytes), 1);
      this.grantWaiting();
    };
  }

  /**
   * Resolves once there is room: less than the limit held besides the largest
   * answer (one answer, however large, is the one being sent to a client that
   * may well be reading: a body must not wait for a large file to go). Files
   * waiting for their turn do not count: a body must not starve behind a run
   * of them. Rejects with `signal`'s reason if it aborts first.
   */
  async whenRoom(signal?: AbortSignal, body?: ArrivingBody): Promise<void> {
    let since: number | undefined;
    while (!this.hasRoom(body)) {
      if (body && this.held === 0) {
        // Nothing held: this body waits on the others' remote servers, not on the client. That
        // wait is bounded: a stalled or slow remote must not hold every other body up.
        since ??= Date.now();
        const left = REMOTE_WAIT_MS - (Date.now() - since);
        if (left <= 0) {
          this.waitedOut.add(body.key);
          continue;
        }
        const timer = setTimeout(() => wakeAll(this.roomWaiters), left);
        await waitForWake(this.roomWaiters, signal).finally(() => clearTimeout(timer));
      } else {
        since = undefined;
        await waitForWake(this.roomWaiters, signal);
      }
    }
  }

  /**
   * A buffered body that is coming in: its bytes count against the others'
   * room (`whenRoom` with it) until it `end`s, held whole or failed.
   */
  arriving(): ArrivingBody {
    const key = Symbol('body');
    this.incoming.set(key, 0);
    return {
      key,
      add: (bytes) => {
        if (this.incoming.has(key)) this.incoming.set(key, this.incoming.get(key)! + bytes);
      },
      end: () => {
        // Another body may lead now: every waiter looks again.
        this.waitedOut.delete(key);
        if (this.incoming.delete(key)) wakeAll(this.roomWaiters);
      },
    };
  }

  /**
   * Room for the client's answers, and for `body`'s next chunk. With nothing
   * held, the largest body coming in reads on, and so does one that waited
   * its time out: room would otherwise come only from the bodies themselves,
   * each waiting for the others' remotes (with answers held, it comes once
   * the client takes them).
   */
  private hasRoom(body?: ArrivingBody): boolean {
    if (this.answers === undefined) return true;
    let incoming = 0;
    let largestIncoming = 0;
    for (const bytes of this.incoming.values()) [incoming, largestIncoming] = [incoming + bytes, Math.max(largestIncoming, bytes)];
    const leads = (this.incoming.get(body?.key as symbol) ?? 0) >= largestIncoming;
    if (body && this.held === 0 && (leads || this.waitedOut.has(body.key))) return true;
    return this.held + incoming - this.answers.reduce((largest, bytes) => Math.max(largest, bytes), 0) < this.limitBytes;
  }

  private fits(bytes: number): boolean {
    return this.held === 0 || this.held + bytes <= this.limitBytes;
  }

  private grantWaiting(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.bytes)) this.waiting.shift()!.grant();
    wakeAll(this.roomWaiters); // each looks again: whether a body may read on depends on the body too
  }
}

/** A buffered body coming in (see `AnswerBudget.arriving`). */
export interface ArrivingBody {
  readonly key: symbol;
  /** Counts `bytes` more of it. */
  add(bytes: number): void;
  /** It is held whole, or failed: it counts no more (once, however often called). */
  end(): void;
}
