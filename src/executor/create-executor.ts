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

/** Members only one way of reaching a server takes: given with another, they would be ignored. */
const ONLY_WITH = { url: ['token', 'reconnect'], command: ['args', 'env'] } as const;
/** Members of the handshake with a server: a local executor has none. */
const HANDSHAKE = ['clientName', 'resumeSessionId', 'initializeTimeoutMs', 'protocolGeneration'] as const;

/** Refuses options the chosen way would ignore (`TypeError`), naming them. */
function refuseIgnored(options: CreateExecutorOptions, way: 'url' | 'command' | 'streams' | undefined): void {
  for (const [owner, members] of Object.entries(ONLY_WITH))
    for (const member of members)
      if (owner !== way && options[member] !== undefined) throw new TypeError(`createExecutor: ${member} applies only with ${owner}`);
  const handshake = HANDSHAKE.find((member) => options[member] !== undefined);
  if (way === undefined && handshake !== undefined)
    throw new TypeError(`createExecutor: ${handshake} needs url, command or streams (without them the executor is local)`);
}

/**
 * An executor: local without `url`, `command` or `streams`; otherwise remote,
 * through the server they reach. Refuses (`TypeError`) more than one way, and
 * options the chosen way would ignore.
 */
export async function createExecutor(options: CreateExecutorOptions = {}): Promise<Executor> {
  const ways = (['url', 'command', 'streams'] as const).filter((way) => options[way] !== undefined);
  if (ways.length > 1) throw new TypeError('createExecutor: give at most one of url, command and streams');
  refuseIgnored(options, ways[0]);
  if (options.url !== undefined) return new RemoteExecutor(await ExecServerClient.connectWebSocket(options.url, options));
  if (options.streams) {
    return new RemoteExecutor(await ExecServerClient.connect(options.streams.readable, options.streams.writable, options));
  }
  if (options.command !== undefined) return new RemoteExecutor(await ExecServerClient.spawn(options));
  return new LocalExecutor();
}
