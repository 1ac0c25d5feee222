/**
 * Resuming a session on a new connection after the old one dropped (a
 * WebSocket listener keeps a dropped connection's session for a while, see
 * `server/session-registry.ts`). Connections are opened until one resumes
 * the session or the window ends; −32010 (the server has not yet noticed the
 * old connection is gone) and failed connects are retried, with backoff.
 */
import { ResponseError } from 'vscode-jsonrpc/node';
import { ErrorCode } from '../protocol/errors.js';
import { type MethodName, Methods } from '../protocol/methods.js';
import type { Link } from './link.js';

export interface ReconnectOptions {
  /** How long to keep trying after a drop (default 30 s, our listener's default window). */
  windowMs?: number;
  /** Told when the connection dropped and the client starts resuming (e.g. to show "reconnecting…"). */
  onReconnecting?: (reason: string) => void;
  /** Told when the session is resumed on a new connection (before process sessions catch up). */
  onReconnected?: () => void;
}

export const DEFAULT_RECONNECT_WINDOW_MS = 30_000;
const FIRST_DELAY_MS = 50;
const MAX_DELAY_MS = 1000;

export interface ResumeAttempt {
  sessionId: string;
  clientName: string;
  initializeTimeoutMs: number;
  windowMs: number;
  /** True once the client is closing: stop trying. */
  stopped: () => boolean;
}

/**
 * Resolves with a link that resumed the session; rejects with the reason it
 * cannot be. `open` gets how long the connection's handshake may take: no
 * attempt outlasts the window (a server that accepts TCP but never answers
 * must not hold the client).
 */
export async function resumeOnNewLink(open: (handshakeTimeoutMs: number) => Promise<Link>, attempt: ResumeAttempt): Promise<Link> {
  const deadline = Date.now() + attempt.windowMs;
  let delay = FIRST_DELAY_MS;
  let lastError = 'no attempt';
  while (!attempt.stopped() && Date.now() < deadline) {
    let link: Link | undefined;
    try {
      const budget = Math.max(1, Math.min(attempt.initializeTimeoutMs, deadline - Date.now()));
      link = await open(budget);
      await withTimeout(link.request('initialize', { clientName: attempt.clientName, resumeSessionId: attempt.sessionId }), budget);
      await link.notify('initialized', {});
      // It may have dropped while `initialized` was on its way: then it is one more failed attempt.
      if (link.isDown) throw new Error('the new connection dropped at once');
      return link;
    } catch (error) {
      link?.abort('resume failed');
      if (error instanceof ResponseError && error.code !== ErrorCode.SessionAttached) {
        throw new Error(`the server cannot resume session ${attempt.sessionId}: ${error.message}`);
      }
      lastError = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(delay, deadline - Date.now()))));
    delay = Math.min(delay * 2, MAX_DELAY_MS);
  }
  throw new Error(`could not resume session ${attempt.sessionId} within ${attempt.windowMs} ms (last: ${lastError})`);
}

/**
 * Whether a request whose connection dropped may be sent again: always if it
 * never left (`sent` false), else as `MethodSpec.retry` says.
 */
export function mayRetry(method: string, params: unknown, sent: boolean): boolean {
  if (!sent) return true;
  const retry = Object.hasOwn(Methods, method) ? Methods[method as MethodName].retry : 'never';
  if (retry === 'safe') return true;
  return retry === 'withWriteId' && typeof (params as { writeId?: unknown } | null)?.writeId === 'string';
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`initialize was not answered within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
