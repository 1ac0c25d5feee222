/**
 * exec-server: run processes, files and HTTP on a machine through a helper
 * process that speaks line-delimited JSON-RPC on stdio.
 *
 * - `ExecServerClient` spawns or connects to a server and drives it.
 * - `ExecServer` is the server itself, over any pair of streams.
 * - The protocol types, method names and error codes are exported as well.
 */
export * from './client/index.js';
export { ExecServer, type ExecServerOptions } from './server/exec-server.js';
export { ProcessRuntime, type ProcessRuntimeOptions, type SpawnerMode } from './server/process/runtime.js';
export { createStderrLogger, silentLogger, type Logger, type LogLevel } from './server/logger.js';
export { ErrorCode, ProtocolError } from './protocol/errors.js';
export { Method } from './protocol/method-names.js';
export { Notification } from './protocol/notifications.js';
export type * from './protocol/types.js';
export * from './executor/index.js';
export * from './sessions/index.js';
