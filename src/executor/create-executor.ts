/**
 * Picks an executor: nothing given → local; a command → spawned server;
 * streams → connected server; a `ws://` URL → a server listening on WebSocket.
 */
import type { Readable, Writable } from 'node:stream';
import { ExecServerClient } from '../client/exec-server-client.js';
import type { WebSocketConnectOptions } from '../client/options.js';
import type { Executor } from './executor.js';
import { LocalExecutor } from './local-executor.js';
import { RemoteExecutor } from './remote-executor.js';

export interface CreateExecutorOptions extends WebSocketConnectOptions {
  /** Run through an exec-server listening on WebSocket (`exec-server --listen ws://…`, or Codex's); see `token`, `reconnect`. */
  url?: string;
  /** Run through an exec-server started with this command (e.g. `ssh`, with `args`). */
  command?: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** Run through an exec-server already reachable over these streams. */
  streams?: { readable: Readable; writable: Writable };
}

export async function createExecutor(options: CreateExecutorOptions = {}): Promise<Executor> {
  const ways = [options.url, options.command, options.streams].filter((way) => way !== undefined).length;
  if (ways > 1) throw new TypeError('createExecutor: give at most one of url, command and streams');
  if (options.url !== undefined) return new RemoteExecutor(await ExecServerClient.connectWebSocket(options.url, options));
  if (options.streams) {
    return new RemoteExecutor(await ExecServerClient.connect(options.streams.readable, options.streams.writable, options));
  }
  if (options.command !== undefined) return new RemoteExecutor(await ExecServerClient.spawn(options));
  return new LocalExecutor();
}
