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
import net, { type Socket } from 'node:net';
import { spawnError } from '../os-error.js';
import type { Child, ChildEvents, SpawnRequest } from './child.js';
import { killSession, signalChild } from './kill.js';
import { OutputPipe, SocketOutput, type ChildOutput } from './output-pipe.js';
import type { OpenedPipe, StdioPipes } from './pipe-pool.js';
import { perlExec } from './perl.js';
import type { ProcessRuntime } from './runtime.js';
import { SpawnerUnavailable, type SpawnedChild } from './spawner.js';

/**
 * Without the spawner, a child Node spawns inherits every descriptor that
 * lacks close-on-exec (PTY masters, a host's): it then execs through perl,
 * which closes them first (`ProcessRuntime.childrenCloseDescriptors`).
 * Otherwise the child is spawned directly.
 */
function execPlan(request: SpawnRequest, closeDescriptors: boolean): ExecPlan {
  const viaPerl = closeDescriptors ? perlExec(request.file, request.argv0, request.args, request.env, { closeAbove: 2 }) : undefined;
  return viaPerl ? { ...viaPerl, argv0: 'perl' } : { file: request.file, args: request.args, argv0: request.argv0, env: request.env };
}

interface ExecPlan {
  file: string;
  args: string[];
  argv0: string;
  env: Record<string, string>;
}

/**
 * Starts the child with node:child_process, on real pipes from the pool.
 * Without the pool (no perl or /proc) the child gets Node's socketpairs.
 */
async function spawnWithNode(request: SpawnRequest, runtime: ProcessRuntime): Promise<SpawnedChild> {
  const pipes = await runtime.pipePool()?.open(request.pipeStdin);
  if (runtime.stopped) {
    // Stopped meanwhile (its owner closing): the spawner is gone, and nothing is to start now.
    for (const pipe of pipes ? stdioList(pipes) : []) for (const fd of [pipe.ours, pipe.theirs]) closeQuietly(fd);
    throw new Error('the process runtime is stopped');
  }
  if (!pipes) runtime.warnSocketpairs();
  const { file, args, argv0, env } = execPlan(request, runtime.childrenCloseDescriptors());
  const stdinMode = request.pipeStdin ? (pipes?.stdin?.theirs ?? 'pipe') : 'ignore';
  let child: ChildProcess;
  try {
    child = spawn(file, args, {
      argv0,
      cwd: request.cwd,
      env,
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
  if (child.pid === undefined) {
    // Before any stream is made of the child's stdio, which a spawn that failed (EMFILE) may not have.
    for (const pipe of pipes ? stdioList(pipes) : []) closeQuietly(pipe.ours);
    // libuv knows synchronously that exec failed; Node tells us on the next tick.
    throw await new Promise<Error>((resolve) => child.once('error', resolve));
  }
  const streams = pipes ? socketsFor(pipes) : socketsOf(child);
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
    stdin: pipes.stdin && new net.Socket({ fd: pipes.stdin.ours, readable: false, writable: true }),
    stdout: new OutputPipe(pipes.stdout.ours),
    stderr: new OutputPipe(pipes.stderr.ours),
  };
}

function socketsOf(child: ChildProcess): Streams {
  return {
    stdin: (child.stdin as Socket | null) ?? undefined,
    stdout: new SocketOutput(child.stdout as Socket),
    stderr: new SocketOutput(child.stderr as Socket),
  };
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // already closed
  }
}

export class PipeChild implements Child {
  readonly tty = false;
  readonly pid: number;
  private stdinOpen: boolean;
  private readonly stdin: Socket | undefined;
  private readonly stdout: ChildOutput;
  private readonly stderr: ChildOutput;
  private readonly endStdin: () => void;
  private reaped = false;

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
    this.stdout.onData((bytes) => events.output('stdout', bytes));
    this.stderr.onData((bytes) => events.output('stderr', bytes));
    // `closed` needs the exit and the end of both pipes (which escaped descendants may hold open).
    const pipesClosed = Promise.all([this.stdout.closed, this.stderr.closed]);
    let pipesDone = false;
    void pipesClosed.then(() => (pipesDone = true));
    void child.exited.then(async (status) => {
      this.reaped = true;
      events.exit(status);
      // Pipes that ended before the exit close it in the same turn: a read the exit woke then says closed.
      if (!pipesDone) await pipesClosed;
      // Once closed, writes are dropped (process-manager.ts): nothing more goes to stdin, and its
      // descriptor would otherwise stay open in the server for as long as the server runs.
      this.stdinOpen = false;
      this.stdin?.destroy();
      events.close();
    });
  }

  /** Spawns the child; rejects with the −32603 `ProtocolError` if exec fails. */
  static async spawn(request: SpawnRequest, events: ChildEvents, runtime: ProcessRuntime): Promise<PipeChild> {
    try {
      return new PipeChild(await PipeChild.start(request, runtime), events);
    } catch (error) {
      throw spawnError(error);
    }
  }

  private static async start(request: SpawnRequest, runtime: ProcessRuntime): Promise<SpawnedChild> {
    const started = runtime.useSpawner() ? runtime.spawner()?.spawn(request) : undefined;
    if (started) {
      try {
        return await started;
      } catch (error) {
        if (!(error instanceof SpawnerUnavailable)) throw error;
      }
    }
    return spawnWithNode(request, runtime);
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

  signal(signal: NodeJS.Signals): void {
    signalChild(this.pid, signal, !this.reaped);
  }

  killTree(): void {
    killSession(this.pid, !this.reaped);
  }
}
