/**
 * Where a client's notifications go: `process/output`, `exited` and `closed`
 * to the process session they name (which restores seq order), streamed
 * HTTP body pieces to their body. Notifications for nobody are ignored.
 */
import { Notification, type NotificationName, type NotificationParamsOf, Notifications } from '../protocol/notifications.js';
import { decodeBase64 } from '../protocol/base64.js';
import { decodeOutputLine, type OutputLine } from '../transport/output-line.js';
import { ClientErrors, type ExecServerClientError } from './errors.js';
import { HttpBodies } from './http-bodies.js';
import type { ProcessSession } from './process-session.js';

/** The notifications routed (and so checked) here; others (`fs/missingChanged`) are ignored. */
const ROUTED = new Set<string>([
  Notification.ProcessOutput,
  Notification.ProcessExited,
  Notification.ProcessClosed,
  Notification.HttpBodyDelta,
]);

export class EventRouter {
  readonly sessions = new Map<string, ProcessSession>();
  readonly bodies: HttpBodies;

  /** `violation`: a notification routed here whose params break the protocol; `hold`: see `Link.hold`. */
  constructor(
    private readonly violation: (error: ExecServerClientError) => void,
    hold: () => () => void,
  ) {
    this.bodies = new HttpBodies(hold);
  }

  notification(method: string, params: unknown): void {
    if (!ROUTED.has(method)) return;
    const parsed = Notifications[method as NotificationName].params.safeParse(params);
    if (!parsed.success) {
      this.violation(ClientErrors.malformedNotification(method, params, firstIssue(parsed.error.issues)));
      return;
    }
    const is = <N extends NotificationName>(name: N, _params: unknown): _params is NotificationParamsOf<N> => method === name;
    if (is(Notification.ProcessOutput, params)) {
      const chunk = decodeBase64(params.chunk);
      if (chunk.ok) this.output({ ...params, chunk: chunk.bytes });
      else this.violation(ClientErrors.malformedNotification(method, params, `chunk: ${chunk.error}`));
    } else if (is(Notification.ProcessExited, params))
      this.sessions.get(params.processId)?.receive({ type: 'exited', seq: params.seq, exitCode: params.exitCode });
    else if (is(Notification.ProcessClosed, params)) this.sessions.get(params.processId)?.receive({ type: 'closed', seq: params.seq });
    else if (is(Notification.HttpBodyDelta, params)) this.bodies.receive(params);
  }

  /** `process/output` lines skip JSON.parse and the dispatch queue (sessions re-order by seq). */
  preview(line: Buffer): boolean {
    const output = decodeOutputLine(line);
    if (!output) return false;
    this.output(output);
    return true;
  }

  /** After a resume: each started session reads what it missed (one whose start waited for the resume missed nothing). */
  async catchUpStarted(): Promise<void> {
    const started = [...this.sessions.values()].filter((session) => session.started);
    await Promise.all(started.map((session) => session.catchUp()));
  }

  /** The connection is gone for good: every session and body fails with `message`. */
  failAll(message: string): void {
    for (const session of [...this.sessions.values()]) session.fail(message);
    this.sessions.clear();
    this.bodies.failAll(message);
  }

  private output({ processId, seq, stream, chunk }: OutputLine): void {
    this.sessions.get(processId)?.receive({ type: 'output', seq, stream, chunk });
  }
}

/** Where the params first break the schema, e.g. `exitCode: Invalid input: expected number, received undefined`. */
function firstIssue(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): string {
  const issue = issues[0];
  if (!issue) return 'not what the protocol says';
  return issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ${issue.message}` : issue.message;
}
