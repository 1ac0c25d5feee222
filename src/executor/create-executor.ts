/** Picks an executor: nothing given → local; a command → spawned server; streams → connected server. */
import type { Readable, Writable } from 'node:stream';
import { ExecServerClient } from '../client/exec-server-client.js';
import type { ConnectOptions } from '../client/options.js';
import type { Executor } from './executor.js';
import { LocalExecutor } from './local-executor.js';
import { RemoteExecutor } from './remote-executor.js';

export interface CreateExecutorOptions extends ConnectOptions {
  /** Run through an exec-server started with this command (e.g. `ssh`, with `args`). */
  command?: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** Run through an exec-server already reachable over these streams. */
  streams?: { readable: Readable; writable: Writable };
}

export async function createExecutor(options: CreateExecutorOptions = {}): Promise<Executor> {
  if (options.streams) {
    return new RemoteExecutor(await ExecServerClient.connect(options.streams.readable, options.streams.writable, options));
  }
  if (options.command !== undefined) return new RemoteExecutor(await ExecServerClient.spawn(options));
  return new LocalExecutor();
}
