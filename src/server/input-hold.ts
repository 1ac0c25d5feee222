/**
 * When a server stops reading its client's requests, so that answers cannot
 * pile up in memory faster than the client takes them (a client that sends
 * hundreds of `fs/readFile` and reads nothing): while the writer is
 * congested, or while `MAX_BUSY` requests that do bounded work are
 * unanswered. Requests that wait on something outside (a long-poll, an HTTP
 * request) do not count: a client may keep many open and must still be heard.
 */
import { Method } from '../protocol/method-names.js';

/** Unanswered requests of bounded work before reading stops: parallel enough for any client. */
const MAX_BUSY = 64;

const WAITING: ReadonlySet<string> = new Set([Method.ProcessRead, Method.HttpRequest]);

export class InputHold {
  /** Unanswered bounded requests by id (a client may reuse an id while one is unanswered). */
  private readonly busy = new Map<unknown, number>();
  private busyCount = 0;

  constructor(private readonly congested: () => boolean) {}

  requestRead(id: unknown, method: string): void {
    if (WAITING.has(method)) return;
    this.busy.set(id, (this.busy.get(id) ?? 0) + 1);
    this.busyCount++;
  }

  answered(id: unknown): void {
    const count = this.busy.get(id);
    if (count === undefined) return;
    if (count === 1) this.busy.delete(id);
    else this.busy.set(id, count - 1);
    this.busyCount--;
  }

  get holding(): boolean {
    return this.busyCount >= MAX_BUSY || this.congested();
  }
}
