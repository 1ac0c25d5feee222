/**
 * A child on plain pipes: stdin is /dev/null or a pipe, stdout and stderr are
 * separate pipes. The child is a session and group leader, so killing its
 * group reaches every descendant that did not leave.
 *
 * Children are started by node:child_process while the server is small, and
 * by the spawner (`spawner.ts`) once it is big: the spawner's fork does not
 * slow down as the server's memory grows. We use node:child_process rather
 * than execa: the server needs the raw streams (pause/resume for
 * backpressure, no result buffering) and nothing else execa adds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { Socket } from 'node:net';
import { spawnError } from '../os-error.js';
import type { Child, ChildEvents, SpawnRequest } from './child.js';
import { killSession } from './kill.js';
import { PipePool, type OpenedPipe, type StdioPipes } from './pipe-pool.js';
import { perlExec } from './perl.js';
import { openPtyMasters } from './pty-child.js';
import { Spawner, SpawnerUnavailable, type SpawnedChild } from './spawner.js';

/**
 * Without the spawner, while PTYs are open their master descriptors would
 * leak into this child (they lack close-on-exec), so it then execs through
 * perl, which closes them first. With no PTY open the child is spawned directly.
 */
function execPlan(request: SpawnRequest): [file: string, args: string[], argv0: string] {
  const masters = openPtyMasters();
  const viaPerl = masters.length > 0 ? perlExec(request.file, request.argv0, request.args, masters) : undefined;
  return viaPerl ? [...viaPerl, 'perl'] : [request.file, request.args, request.argv0];
}

const pools = new WeakMap<Spawner, PipePool>();

/** The pipe factory of this process's spawner; undefined without perl or /proc. */
function pipePool(): PipePool | undefined {
  const spawner = Spawner.shared();
  if (!spawner) return undefined;
  let pool = pools.get(spawner);
  if (!pool) pools.set(spawner, (pool = new PipePool(spawner)));
  return pool;
}

/** Makes the first pipes ahead of the first start. */
export function preparePipes(): void {
  pipePool()?.prefill();
}

let warnedSocketpairs = false;

/**
 * Starts the child with node:child_process, on real pipes from the pool.
 * Without the pool (no perl or /proc) the child gets Node's socketpairs.
 */
async function spawnWithNode(request: SpawnRequest): Promise<SpawnedChild> {
  const pipes = await pipePool()?.open(request.pipeStdin);
  if (!pipes && !warnedSocketpairs) {
    warnedSocketpairs = true;
    process.stderr.write('exec-server: perl or /proc unavailable; pipe children get socketpairs, not pipes\n');
  }
  const [file, args, argv0] = execPlan(request);
  const stdinMode = request.pipeStdin ? (pipes?.stdin?.theirs ?? 'pipe') : 'ignore';
  let child: ChildProcess;
  try {
    child = spawn(file, args, {
      argv0,
      cwd: request.cwd,
      env: request.env,
      detached: true,
      stdio: [stdinMode, pipes?.stdout.theirs ?? 'pipe', pipes?.stderr.theirs ?? 'pipe'],
    });
  } catch (error) {
    for (const pipe of pipes ? stdioList(pipes) : []) closeQuietly(pipe.ours);
    throw error;
  } finally {
    // The child has its copies (or failed): ours of its ends must go, or EOF never comes.
    for (const pipe of pipes ? stdioList(pipes) : []) closeQuietly(pipe.theirs);
  }
  const streams = pipes ? socketsFor(pipes) : socketsOf(child);
  if (child.pid === undefined) {
    for (const stream of [streams.stdin, streams.stdout, streams.stderr]) stream?.destroy();
    // libuv knows synchronously that exec failed; Node tells us on the next tick.
    throw await new Promise<Error>((resolve) => child.once('error', resolve));
  }
  child.on('error', () => undefined); // e.g. a kill after exit; the exit is reported below
  return {
    pid: child.pid,
    ...streams,
    exited: new Promise((resolve) =>
      child.once('exit', (code, signal) => resolve(code !== null ? { code } : { signal: os.constants.signals[signal ?? 'SIGKILL'] })),
    ),
    closeStdin: () => streams.stdin?.end(),
  };
}

type Streams = Pick<SpawnedChild, 'stdin' | 'stdout' | 'stderr'>;

function stdioList(pipes: StdioPipes): OpenedPipe[] {
  return pipes.stdin ? [pipes.stdin, pipes.stdout, pipes.stderr] : [pipes.stdout, pipes.stderr];
}

function socketsFor(pipes: StdioPipes): Streams {
  return {
    stdin: pipes.stdin && new Socket({ fd: pipes.stdin.ours, readable: false, writable: true }),
    stdout: new Socket({ fd: pipes.stdout.ours, readable: true, writable: false }),
    stderr: new Socket({ fd: pipes.stderr.ours, readable: true, writable: false }),
  };
}

function socketsOf(child: ChildProcess): Streams {
  return { stdin: (child.stdin as Socket | null) ?? undefined, stdout: child.stdout as Socket, stderr: child.stderr as Socket };
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // already closed
  }
}

/**
 * Past this resident size a fork of the server costs more than the trip to
 * the spawner (measured here, /bin/true start → closed p50: Node's spawn
 * 3.5 / 5.2 / 8.2 ms at 63 / 112 / 192 MiB, the spawner 4.0-4.2 ms at all three).
 * Those sizes came from retained output, i.e. Buffers. RSS is only a proxy:
 * V8 heap pages slow a fork far less (bare Node, spawn() p50: +1.2 ms with
 * 20 MiB in a Buffer, +0.5 ms with 55 MiB on the heap).
 */
const SPAWNER_ABOVE_RSS_BYTES = 96 * 1024 * 1024;

/** `EXEC_SERVER_SPAWNER=always|never` overrides the choice (tests run both ways). */
const SPAWNER_MODE = process.env.EXEC_SERVER_SPAWNER;

/**
 * The spawner once the server is big, or while PTYs are open (it needs no
 * perl start-up to close their masters: it holds none of them).
 */
function useSpawner(): boolean {
  if (SPAWNER_MODE === 'always' || SPAWNER_MODE === 'never') return SPAWNER_MODE === 'always';
  return openPtyMasters().length > 0 || process.memoryUsage.rss() > SPAWNER_ABOVE_RSS_BYTES;
}

export class PipeChild implements Child {
  readonly tty = false;
  readonly pid: number;
  private stdinOpen: boolean;
  private readonly stdin: Socket | undefined;
  private readonly stdout: Socket;
  private readonly stderr: Socket;
  private readonly endStdin: () => void;

  private constructor(child: SpawnedChild, events: ChildEvents) {
    this.pid = child.pid;
    this.stdin = child.stdin;
    this.stdout = child.stdout;
    this.stderr = child.stderr;
    this.stdinOpen = this.stdin !== undefined;
    this.endStdin = child.closeStdin;
    this.stdin?.on('error', () => {
      // The child closed its stdin: later writes are silently dropped (§3.5).
      this.stdinOpen = false;
    });
    this.stdout.on('data', (bytes: Buffer) => events.output('stdout', bytes));
    this.stderr.on('data', (bytes: Buffer) => events.output('stderr', bytes));
    // `closed` needs the exit and the end of both pipes (which escaped descendants may hold open).
    const pipesClosed = Promise.all([this.stdout, this.stderr].map((stream) => new Promise((resolve) => stream.once('close', resolve))));
    void child.exited.then(async (status) => {
      events.exit(status);
      await pipesClosed;
      events.close();
    });
  }

  /** Spawns the child; rejects with the −32603 `ProtocolError` if exec fails. */
  static async spawn(request: SpawnRequest, events: ChildEvents): Promise<PipeChild> {
    try {
      return new PipeChild(await PipeChild.start(request), events);
    } catch (error) {
      throw spawnError(error);
    }
  }

  private static async start(request: SpawnRequest): Promise<SpawnedChild> {
    const started = useSpawner() ? Spawner.shared()?.spawn(request) : undefined;
    if (started) {
      try {
        return await started;
      } catch (error) {
        if (!(error instanceof SpawnerUnavailable)) throw error;
      }
    }
    return spawnWithNode(request);
  }

  write(bytes: Buffer): boolean {
    if (!this.stdinOpen || !this.stdin || this.stdin.writableEnded) return false;
    if (bytes.length > 0) this.stdin.write(bytes);
    return true;
  }

  closeStdin(): void {
    this.stdinOpen = false;
    this.endStdin();
  }

  resize(): void {
    // Pipes have no window size.
  }

  pause(): void {
    this.stdout.pause();
    this.stderr.pause();
  }

  resume(): void {
    this.stdout.resume();
    this.stderr.resume();
  }

  forceClose(): void {
    this.stdout.destroy();
    this.stderr.destroy();
  }

  killTree(): void {
    killSession(this.pid);
  }
}
