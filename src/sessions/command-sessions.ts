/**
 * Interactive command sessions over PTYs, for agent harnesses and editors:
 * run a command, wait a bounded time for output, come back later with more
 * input. Works over any `Executor`, so the same code drives this machine or
 * a remote exec-server.
 */
import { ClientErrors } from '../client/errors.js';
import { randomUuid } from '../protocol/random-ids.js';
import type { Executor, ProcessEvent } from '../executor/executor.js';
import { InFlight } from '../executor/in-flight.js';
import { SessionOutput } from './session-output.js';

export const DEFAULT_TIMEOUT_MS = 1000;
export const MAX_TIMEOUT_MS = 60_000;
export const OUTPUT_MAX_BYTES = 128 * 1024;

export interface ExecRequest {
  /** Continue this session; without it, `input` is the argv of a new one. */
  sessionId?: number;
  /** argv for a new session, or text chunks (joined with spaces) for its stdin. */
  input: string[];
  /** How long to collect output (default 1000 ms, at most 60000 ms). */
  timeoutMs?: number;
}

export interface ExecResult {
  /** Present while the session's process is still running. */
  sessionId?: number;
  output: string;
  /**
   * Present once the session's process has exited: its exit code. Sessions run on a PTY, where
   * servers (Codex's too) report a process ended by a signal as 1, not 128 + the signal's number.
   */
  exitCode?: number;
}

export interface CommandSessionsOptions {
  /** Environment of new sessions (default: this process's). */
  env?: Record<string, string>;
  /** Working directory of new sessions (default: this process's). */
  cwd?: string;
}

export class CommandSessionError extends Error {
  constructor(
    readonly kind: 'missingCommandLine' | 'unknownSession' | 'closed',
    message: string,
  ) {
    super(message);
    this.name = 'CommandSessionError';
  }
}

interface Session {
  processId: string;
  output: SessionOutput;
  /** The end of the last call on it: calls on one session take turns, each writing once the one before has collected. */
  turn: Promise<unknown>;
  closed: boolean;
  exitCode?: number;
  /** Why its events stopped when the transport went (the process's fate is unknown). */
  failure?: string;
}

export class CommandSessions {
  private readonly sessions = new Map<number, Session>();
  private readonly byProcess = new Map<string, Session>();
  private nextId = 1;
  private closing = false;
  /** Sessions still starting: `close` waits for them (each kills its process once it sees the close). */
  private readonly opening = new InFlight();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly executor: Executor,
    private readonly options: CommandSessionsOptions = {},
  ) {
    this.unsubscribe = executor.onEvent((processId, event) => this.onEvent(processId, event));
  }

  private onEvent(processId: string, event: ProcessEvent): void {
    const session = this.byProcess.get(processId);
    if (!session) return;
    if (event.type === 'output') session.output.push(event.chunk);
    else if (event.type === 'exited') session.exitCode = event.exitCode;
    else if (event.type === 'closed' || event.type === 'failed') {
      if (event.type === 'failed') session.failure = event.message;
      session.closed = true;
      this.byProcess.delete(processId);
      session.output.wake();
    }
  }

  /**
   * Runs a new session or continues one. Rejects with a `CommandSessionError` for a missing
   * command line, an unknown session or after `close`; with an `ExecServerClientError`
   * (`disconnected`) when the executor's transport went while the session ran; and with the
   * executor's `ExecServerError` when the server refused a call (a command or cwd that does not
   * exist, a write to a terminated process). A call collecting output when `close` runs returns
   * what it has, without `sessionId` or `exitCode`.
   */
  async exec(request: ExecRequest): Promise<ExecResult> {
    if (this.closing) throw closedError();
    const [timeoutMs, warning] = clampTimeout(request.timeoutMs);
    const { sessionId, input } = request;
    if (sessionId === undefined) {
      if (input.length === 0) throw new CommandSessionError('missingCommandLine', 'missing command line');
      // The id is taken now and the opening call takes the first turn: a call on the id, even one made
      // while the process is still starting, waits for it (and finds the id unknown if the start fails).
      const id = this.nextId++;
      const session: Session = {
        processId: randomUuid(),
        output: new SessionOutput(OUTPUT_MAX_BYTES),
        turn: Promise.resolve(),
        closed: false,
      };
      this.sessions.set(id, session);
      const opening = this.opening.track(this.open(id, session, input)).then(() => this.collect(id, session, timeoutMs, warning));
      session.turn = opening.catch(() => undefined);
      return opening;
    }
    // Concurrent calls on one session would split its output between them at random: they take turns.
    const queued = this.sessions.get(sessionId);
    const call = (queued?.turn ?? Promise.resolve()).then(async () => {
      // close() ran while it waited its turn: it was under way, and returns what there is.
      if (queued && this.closing) return { output: warning + queued.output.take(false) };
      return this.collect(...(await this.resume(sessionId, input)), timeoutMs, warning);
    });
    if (queued) queued.turn = call.catch(() => undefined);
    return call;
  }

  private async collect(id: number, session: Session, timeoutMs: number, warning: string): Promise<ExecResult> {
    // Output keeps coming in until the deadline; only the session's end cuts the wait short.
    if (!session.closed && timeoutMs > 0) await session.output.waitForEnd(timeoutMs);
    // An unfinished character waits for the rest of its bytes in the next call.
    const output = warning + session.output.take(!session.closed);
    if (session.closed) {
      this.sessions.delete(id);
      if (session.failure !== undefined) throw ClientErrors.cutOff(session.failure);
      return session.exitCode === undefined ? { output } : { output, exitCode: session.exitCode };
    }
    return { sessionId: id, output };
  }

  private async open(id: number, session: Session, argv: string[]): Promise<void> {
    // Registered first: output may arrive before start() resolves.
    this.byProcess.set(session.processId, session);
    const forget = () => {
      this.byProcess.delete(session.processId);
      this.sessions.delete(id);
    };
    try {
      await this.executor.start({
        processId: session.processId,
        argv,
        cwd: this.options.cwd ?? process.cwd(),
        env: this.options.env ?? inheritedEnv(),
        tty: true,
      });
    } catch (error) {
      forget();
      throw error;
    }
    if (this.closing) {
      // close() ran while it started: it goes the way of the others, and this call fails as a later one would.
      forget();
      await this.executor.terminate(session.processId).catch(() => false);
      throw closedError();
    }
  }

  private async resume(id: number, input: string[]): Promise<[number, Session]> {
    const session = this.sessions.get(id);
    if (session?.failure !== undefined) {
      this.sessions.delete(id);
      throw ClientErrors.cutOff(session.failure);
    }
    // A session that ended after the last call hands over what it printed since and its exit code,
    // once (the result without a sessionId says it is over); then it is unknown, as the seed's
    // manager answers for a finished one.
    if (!session) {
      this.sessions.delete(id);
      throw new CommandSessionError('unknownSession', `unknown session id ${id}`);
    }
    // Handed over once: a call that comes meanwhile finds it unknown.
    if (session.closed) this.sessions.delete(id);
    else if (input.length > 0) await this.executor.write(session.processId, Buffer.from(input.join(' ')));
    return [id, session];
  }

  /** Terminates every session (those still starting too, before it resolves) and stops listening. */
  async close(): Promise<void> {
    this.closing = true;
    this.unsubscribe();
    const sessions = [...this.sessions.values()];
    await Promise.all([...sessions.map((s) => this.executor.terminate(s.processId).catch(() => false)), this.opening.settled()]);
    // No closed event will come now: an exec still collecting returns what it has, as for an exited process.
    for (const session of sessions) {
      session.closed = true;
      session.output.wake();
    }
    this.sessions.clear();
    this.byProcess.clear();
  }
}

const closedError = () => new CommandSessionError('closed', 'the command sessions are closed');

function clampTimeout(requested: number | undefined): [number, string] {
  if (requested === undefined) return [DEFAULT_TIMEOUT_MS, ''];
  if (Number.isNaN(requested)) throw new RangeError('timeoutMs must be a number of milliseconds, got NaN');
  if (requested > MAX_TIMEOUT_MS) {
    return [
      MAX_TIMEOUT_MS,
      `Warning: requested timeout ${requested}ms exceeds maximum of ${MAX_TIMEOUT_MS}ms; clamping to ${MAX_TIMEOUT_MS}ms.\n`,
    ];
  }
  return [Math.max(0, requested), ''];
}

function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  return env;
}
