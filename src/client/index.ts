export { ExecServerClient } from './exec-server-client.js';
export {
  DEFAULT_INITIALIZE_TIMEOUT_MS,
  type ConnectOptions,
  type WebSocketConnectOptions,
  type SpawnOptions,
  type StartOptions,
  type HttpRequestOptions,
  type HttpResponse,
  type HttpStreamResponse,
} from './options.js';
export { MAX_BLOCK_BYTES, type FileStreamOptions } from './file-streams.js';
export { ProcessSession, type ProcessEvent, type ReadOptions, type ReadResult } from './process-session.js';
export { ExecServerError, ExecServerClientError, DISCONNECTED, type ClientErrorKind } from './errors.js';
export type { RunOptions, RunResult } from './run.js';
export type { ReconnectOptions } from './reconnect.js';
