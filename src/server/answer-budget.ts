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
 * A body still coming in holds nothing: how long it takes is up to the
 * remote server, and nothing may wait for that (a file read waiting for a
 * slow body would hold every ordered request behind it). What waits is only
 * ever waiting for the client to take answers.
 */

import { waitForWake, wakeAll } from './wait-for-wake.js';

export class AnswerBudget {
  private held = 0;
  /**
   * What each answer held now holds (see `hasRoom`). Not kept for a budget
   * without a limit: an in-process executor's answers are never given back.
   */
  private readonly answers: number[] | undefined;
  private readonly waiting: { bytes: number; grant: () => void }[] = [];
  private readonly roomWaiters = new Set<() => void>();

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
  whenRoom(signal?: AbortSignal): Promise<void> {
    return this.hasRoom() ? Promise.resolve() : waitForWake(this.roomWaiters, signal);
  }

  private hasRoom(): boolean {
    if (this.answers === undefined) return true;
    return this.held - this.answers.reduce((largest, bytes) => Math.max(largest, bytes), 0) < this.limitBytes;
  }

  private fits(bytes: number): boolean {
    return this.held === 0 || this.held + bytes <= this.limitBytes;
  }

  private grantWaiting(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.bytes)) this.waiting.shift()!.grant();
    if (this.hasRoom()) wakeAll(this.roomWaiters);
  }
}
