/** The options and answers of `ExecServerClient`'s calls. */
import type { HttpHeader, ProcessStartParams } from '../protocol/types.js';
import type { ReconnectOptions } from './reconnect.js';

export const DEFAULT_INITIALIZE_TIMEOUT_MS = 10_000;

export interface ConnectOptions {
  /** Sent as `clientName` in `initialize` (default "exec-server-client"). */
  clientName?: string;
  /** Asks the server to resume a session (the reference rejects unknown ids). */
  resumeSessionId?: string;
  /** How long the handshake may take (default 10 s). */
  initializeTimeoutMs?: number;
  /**
   * Speak this generation instead of the newest the server offers (2 when
   * `initialize` describes the environment). Generation 1 only works with
   * servers that take native paths: ours and Codex 0.134.
   */
  protocolGeneration?: 1 | 2;
}

export interface WebSocketConnectOptions extends ConnectOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /**
   * Resume the session on a new connection when this one drops (generation 2
   * servers; ours keeps a dropped connection's session 30 s by default).
   * Process sessions continue from their last seq, without losing or
   * repeating an event; requests in flight are sent again if they may be
   * repeated (reads; writes, which carry a `writeId`), and otherwise reject
   * with an `outcomeUnknown` error. `true`: keep trying for 30 s.
   */
  reconnect?: boolean | ReconnectOptions;
}

export interface SpawnOptions extends ConnectOptions {
  /** The server program (default: this package's own CLI, run by this Node). */
  command?: string;
  args?: string[];
  /** The server's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** The members of `process/start` beside the process itself, sent as given (PROTOCOL.md §3.2, PROTOCOL-V2.md). */
export const START_EXTRAS = [
  'envPolicy',
  'sandbox',
  'metadata',
  'enforceManagedNetwork',
  'managedNetwork',
  'networkProxy',
  'shellSnapshot',
  'credentialProviders',
] as const;

/**
 * Besides the process itself: `envPolicy` builds the child's environment from
 * the server's (`env` is laid on top); `sandbox` is a Codex sandbox policy,
 * which the server enforces or refuses (never ignores); the others are
 * Codex's, refused by this package's server where they ask for more than it
 * does.
 */
export interface StartOptions extends Partial<Pick<ProcessStartParams, (typeof START_EXTRAS)[number]>> {
  argv: string[];
  /** Default: a random UUID. */
  processId?: string;
  /** Default: this process's cwd. */
  cwd?: string;
  /** The child's whole environment (nothing is inherited). Default: `{ PATH }` of this process. */
  env?: Record<string, string>;
  tty?: boolean;
  pipeStdin?: boolean;
  arg0?: string;
  size?: { rows: number; cols: number };
  /**
   * Keep events until the first consumer (iterator, listener, stream)
   * attaches. Default true; set false when you only poll with `read()`, so
   * that unconsumed output does not accumulate in memory.
   */
  bufferEvents?: boolean;
}

export interface HttpRequestOptions {
  method: string;
  url: string;
  headers?: HttpHeader[];
  body?: Uint8Array | string;
  timeoutMs?: number;
  requestId?: string;
  /**
   * `follow` (default): redirects are followed, at most ten. `stop`: the
   * first redirect is the answer. Refused over a generation-1 server, which
   * has no such member and would follow it.
   */
  redirectPolicy?: 'follow' | 'stop';
}

export interface HttpResponse {
  status: number;
  headers: HttpHeader[];
  body: Buffer;
}

export interface HttpStreamResponse {
  status: number;
  headers: HttpHeader[];
  /** The body as it arrives; throws if the server reports a body error. */
  body: AsyncIterable<Buffer>;
}
