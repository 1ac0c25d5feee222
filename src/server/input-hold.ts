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

/** Whether a request of `method` does bounded work (it does not wait on something outside). */
export const doesBoundedWork = (method: string): boolean => !WAITING.has(method);

export class InputHold {
  constructor(
    /** Requests of bounded work read and not yet answered. */
    private readonly busy: () => number,
    private readonly congested: () => boolean,
  ) {}

  get holding(): boolean {
    return this.busy() >= MAX_BUSY || this.congested();
  }
}
