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
import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { spawnError } from '../os-error.js';
import type { Child, ChildEvents, SpawnRequest } from './child.js';
import { killGroup } from './kill.js';
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

/** Starts the child with node:child_process (the fallback). */
async function spawnWithNode(request: SpawnRequest): Promise<SpawnedChild> {
  const [file, args, argv0] = execPlan(request);
  const child = spawn(file, args, {
    argv0,
    cwd: request.cwd,
    env: request.env,
    detached: true,
    stdio: [request.pipeStdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) {
    // libuv knows synchronously that exec failed; Node tells us on the next tick.
    throw await new Promise<Error>((resolve) => child.once('error', resolve));
  }
  child.on('error', () => undefined); // e.g. a kill after exit; the exit is reported below
  return {
    pid: child.pid,
    stdin: (child.stdin as Socket | null) ?? undefined,
    stdout: child.stdout as Socket,
    stderr: child.stderr as Socket,
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code ?? undefined))),
    closeStdin: () => child.stdin?.end(),
  };
}

const SIGNAL_EXIT_CODE = -1;

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
    void child.exited.then(async (code) => {
      events.exit(code ?? SIGNAL_EXIT_CODE);
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
    killGroup(this.pid);
  }
}
