/**
 * Client-side errors, created in one place. A server's JSON-RPC error is an
 * `ExecServerError` with the server's numeric `code`; failures of the client
 * itself are `ExecServerClientError`s with a string `kind`.
 */

/** An error response from the exec-server. */
export class ExecServerError extends Error {
  constructor(
    readonly code: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ExecServerError';
  }
}

export type ClientErrorKind =
  | 'disconnected'
  | 'spawnFailed'
  | 'connectFailed'
  | 'handshakeTimeout'
  | 'serverExited'
  | 'protocolViolation'
  | 'httpBody'
  | 'outcomeUnknown';

export class ExecServerClientError extends Error {
  constructor(
    readonly kind: ClientErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'ExecServerClientError';
  }
}

export const DISCONNECTED = 'exec-server transport disconnected';

export const ClientErrors = {
  /** A server's error response (or the server's own error, for a check the client makes first). */
  fromServer: (error: { code: number; message: string }) => new ExecServerError(error.code, error.message, { cause: error }),
  /** The canonical disconnect message, with `: <reason>` when there is one. */
  disconnected: (reason?: string) => new ExecServerClientError('disconnected', reason ? `${DISCONNECTED}: ${reason}` : DISCONNECTED),
  spawnFailed: (command: string, detail: string) =>
    new ExecServerClientError('spawnFailed', `failed to start exec-server \`${command}\`: ${detail}`),
  handshakeTimeout: (ms: number) => new ExecServerClientError('handshakeTimeout', `exec-server did not answer initialize within ${ms} ms`),
  serverExited: (status: string, stderrTail: string) =>
    new ExecServerClientError(
      'serverExited',
      `exec-server exited during the handshake (${status})${stderrTail ? `; last stderr:\n${stderrTail}` : ''}`,
    ),
  connectFailed: (url: string, detail: string) =>
    new ExecServerClientError('connectFailed', `cannot connect to exec-server at ${url}: ${detail}`),
  protocolViolation: (line: string) =>
    new ExecServerClientError('protocolViolation', `exec-server sent a line that is not JSON-RPC: ${shorten(line)}`),
  /** A notification this client routes, whose params are not what the protocol says (the server is broken). */
  malformedNotification: (method: string, params: unknown, fault: string) =>
    new ExecServerClientError(
      'protocolViolation',
      `exec-server sent a ${method} notification it cannot have meant (${fault}): ${abbreviated(JSON.stringify(params) ?? 'undefined')}`,
    ),
  /** An answer the protocol rules out (an `initialize` result without a session id): the server is broken. */
  malformedAnswer: (method: string, result: unknown) =>
    new ExecServerClientError(
      'protocolViolation',
      `exec-server answered ${method} with a result it cannot have meant: ${abbreviated(JSON.stringify(result) ?? 'undefined')}`,
    ),
  /** A request in flight when the connection dropped, which cannot safely be sent again after the resume. */
  outcomeUnknown: (method: string, reason: string) =>
    new ExecServerClientError(
      'outcomeUnknown',
      `${method} was in flight when the connection dropped (${reason}); it may or may not have been carried out`,
    ),
  /** A file stream whose handle belonged to a connection that a reconnect replaced: the server closed it with that connection. */
  handleConnectionReplaced: () =>
    new ExecServerClientError(
      'disconnected',
      `${DISCONNECTED}: the connection this file was opened on was replaced, and its handle ended with it`,
    ),
  /** A process session or streamed body cut off by a disconnect (`message` is the disconnect's). */
  cutOff: (message: string) => new ExecServerClientError('disconnected', message),
  /** The server reported that a streamed HTTP body failed. */
  httpBodyFailed: (message: string) => new ExecServerClientError('httpBody', message),
} as const;

/** JSON already: cut, not quoted again. */
function abbreviated(json: string, max = 200): string {
  return json.length <= max ? json : `${json.slice(0, max)}… (${json.length} chars)`;
}

function shorten(line: string, max = 200): string {
  return line.length <= max ? JSON.stringify(line) : `${JSON.stringify(line.slice(0, max))}… (${line.length} chars)`;
}
