/**
 * A child on plain pipes: stdin is /dev/null or a pipe, stdout and stderr are
 * separate pipes. `detached: true` makes it a session and group leader, so
 * killing its group reaches every descendant that did not leave.
 *
 * We use node:child_process rather than execa here: the server needs the raw
 * streams (pause/resume for backpressure, no result buffering) and nothing
 * else execa adds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { spawnError } from '../os-error.js';
import type { Child, ChildEvents, SpawnRequest } from './child.js';
import { killGroup } from './kill.js';
import { perlExec } from './perl.js';
import { openPtyMasters } from './pty-child.js';

/**
 * While PTYs are open their master descriptors would leak into this child
 * (they lack close-on-exec), so it then execs through perl, which closes
 * them first. With no PTY open the child is spawned directly.
 */
function execPlan(request: SpawnRequest): [file: string, args: string[], argv0: string] {
  const masters = openPtyMasters();
  const viaPerl = masters.length > 0 ? perlExec(request.file, request.argv0, request.args, masters) : undefined;
  return viaPerl ? [...viaPerl, 'perl'] : [request.file, request.args, request.argv0];
}

const SIGNAL_EXIT_CODE = -1;

export class PipeChild implements Child {
  readonly tty = false;
  readonly pid: number;
  private stdinOpen: boolean;

  private constructor(
    private readonly process: ChildProcess,
    events: ChildEvents,
  ) {
    this.pid = process.pid!;
    this.stdinOpen = process.stdin !== null;
    process.stdin?.on('error', () => {
      // The child closed its stdin: later writes are silently dropped (§3.5).
      this.stdinOpen = false;
    });
    const forward = (stream: Readable | null, name: 'stdout' | 'stderr') =>
      stream?.on('data', (bytes: Buffer) => events.output(name, bytes));
    forward(process.stdout, 'stdout');
    forward(process.stderr, 'stderr');
    process.on('exit', (code) => events.exit(code ?? SIGNAL_EXIT_CODE));
    process.on('close', () => events.close());
  }

  /** Spawns the child; rejects with the −32603 `ProtocolError` if exec fails. */
  static async spawn(request: SpawnRequest, events: ChildEvents): Promise<PipeChild> {
    let child: ChildProcess;
    const [file, args, argv0] = execPlan(request);
    try {
      child = spawn(file, args, {
        argv0,
        cwd: request.cwd,
        env: request.env,
        detached: true,
        stdio: [request.pipeStdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      throw spawnError(error);
    }
    if (child.pid === undefined) {
      // libuv knows synchronously that exec failed; Node tells us on the next tick.
      const failure = await new Promise<Error>((resolve) => child.once('error', resolve));
      throw spawnError(failure);
    }
    return new PipeChild(child, events);
  }

  write(bytes: Buffer): boolean {
    if (!this.stdinOpen || !this.process.stdin || this.process.stdin.writableEnded) return false;
    if (bytes.length > 0) this.process.stdin.write(bytes);
    return true;
  }

  closeStdin(): void {
    this.stdinOpen = false;
    this.process.stdin?.end();
  }

  resize(): void {
    // Pipes have no window size.
  }

  pause(): void {
    this.process.stdout?.pause();
    this.process.stderr?.pause();
  }

  resume(): void {
    this.process.stdout?.resume();
    this.process.stderr?.resume();
  }

  forceClose(): void {
    this.process.stdout?.destroy();
    this.process.stderr?.destroy();
  }

  killTree(): void {
    killGroup(this.pid);
  }
}
