/**
 * A child on a pseudo-terminal, without losing the tail of its output.
 *
 * node-pty's `spawn()` loses output on Linux when a program writes a burst
 * and exits (microsoft/node-pty#72, #726; measured here: 8 of 50 runs of a
 * 20 KiB burst came up short). When the last slave descriptor closes, the
 * kernel lets the master report EIO while data is still in flight. Its JS
 * layer also injects TERM and PWD and cannot set argv[0].
 *
 * So we use node-pty only for what needs native code: `fork` (forkpty +
 * exec, with inherited descriptors closed since 1.2.0-beta.15, pinned) and
 * `resize`. Around it:
 * - the server keeps its own descriptor on the slave, so the master never
 *   hits EIO while output is pending;
 * - when the child exits, we write a random marker through that slave
 *   descriptor. The terminal is a FIFO: once the marker comes out of the
 *   master, every byte the child wrote before exiting has been read. Then we
 *   report `exit`, close our slave, and read on until EIO: what a job still
 *   holding the terminal writes comes after the exit, and `close` when the
 *   last holder lets go (as the references, and as pipes do).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import tty from 'node:tty';
import { systemError, spawnError } from '../os-error.js';
import type { Child, ChildEvents, ExitStatus, SpawnRequest } from './child.js';
import { newDrainMarker, MarkerSearch } from './drain-marker.js';
import { FdWriter } from './fd-writer.js';
import { killSession, signalChild } from './kill.js';
import { OutputBatch } from './output-batch.js';
import { READ_BUFFER } from './output-pipe.js';
import { perlExec } from './perl.js';
import { TerminalQueries } from './terminal-queries.js';
import type { ProcessRuntime, PtyMasters } from './runtime.js';

type ForkArgs = [file: string, args: string[], env: string[], cwd: string, cols: number, rows: number, uid: number, gid: number];
interface NativePty {
  fork(...args: [...ForkArgs, utf8: boolean, helperPath: string, onExit: (code: number, signal: number) => void]): {
    fd: number;
    pid: number;
    pty: string;
  };
  resize(fd: number, cols: number, rows: number, xPixel: number, yPixel: number): void;
}

let nativeModule: NativePty | undefined;
/** Loaded on first PTY use: servers that only run pipes skip the native addon. */
function native(): NativePty {
  nativeModule ??= createRequire(import.meta.url)('node-pty').native as NativePty;
  return nativeModule;
}

/** How long a drain may wait for the marker while output is flowing. */
const DRAIN_TIMEOUT_MS = 2000;

export class PtyChild implements Child {
  readonly tty = true;
  readonly pid: number;
  private readonly masterFd: number;
  private readonly reader: tty.ReadStream;
  private slaveFd: number | undefined;
  private readonly writer: FdWriter;
  private finished = false;
  private paused = false;
  private exitCode: ExitStatus | undefined;
  private drain: MarkerSearch | undefined;
  private drainTimer: NodeJS.Timeout | undefined;
  private quietDeadline: NodeJS.Timeout | undefined;
  private inputEnded = false;
  private exitReported = false;
  private readonly batch: OutputBatch;
  /** Answers the terminal's status queries (generation 2, as the reference), or undefined. */
  private readonly queries: TerminalQueries | undefined;
  private size: { rows: number; cols: number };

  private constructor(
    forked: { fd: number; pid: number; pty: string },
    private readonly events: ChildEvents,
    private readonly masters: PtyMasters,
    request: SpawnRequest,
  ) {
    this.pid = forked.pid;
    this.size = request.size;
    this.queries = request.answerTerminalQueries
      ? new TerminalQueries(
          (answer) => this.write(answer),
          () => this.size,
        )
      : undefined;
    this.masterFd = forked.fd;
    this.writer = new FdWriter(forked.fd);
    this.batch = new OutputBatch((bytes) => events.output('pty', bytes));
    masters.add(forked.fd);
    this.slaveFd = openSlave(forked.pty);
    // Reads land in one shared buffer and are copied into this child's
    // batch: no buffer allocated and no stream machinery per 4 KiB read.
    this.reader = new tty.ReadStream(forked.fd, {
      onread: { buffer: READ_BUFFER, callback: (length: number) => this.onData(READ_BUFFER.subarray(0, length)) },
    } as ConstructorParameters<typeof tty.ReadStream>[1]);
    this.reader.resume(); // with `onread` there is no 'data' listener to start the reads
    this.reader.on('error', () => this.onInputEnd()); // EIO: every slave descriptor is closed
    this.reader.on('close', () => this.onInputEnd());
  }

  static spawn(request: SpawnRequest, events: ChildEvents, runtime: ProcessRuntime): PtyChild {
    const { file, args, env: envObject } = execPlan(request, runtime.childrenCloseDescriptors());
    const env = Object.entries(envObject).map(([key, value]) => `${key}=${value}`);
    let self: PtyChild | undefined;
    let earlyExit: [number, number] | undefined;
    const onExit = (code: number, signal: number) => {
      if (self) self.onExit(code, signal);
      else earlyExit = [code, signal];
    };
    try {
      const forked = native().fork(file, args, env, request.cwd, request.size.cols, request.size.rows, -1, -1, false, '', onExit);
      self = new PtyChild(forked, events, runtime.ptyMasters, request);
    } catch (error) {
      throw spawnError(error);
    }
    if (earlyExit) self.onExit(...earlyExit);
    return self;
  }

  write(bytes: Buffer): boolean {
    if (this.finished) return false;
    this.writer.write(bytes);
    return true;
  }

  /** A PTY has no separate stdin to close; the manager rejects the request. */
  closeStdin(): void {}

  resize(rows: number, cols: number): void {
    if (this.finished || this.exitCode !== undefined) return;
    try {
      native().resize(this.masterFd, cols, rows, 0, 0);
      this.size = { rows, cols };
    } catch {
      // The terminal went away between our check and the ioctl: nothing to resize.
    }
  }

  pause(): void {
    this.paused = true;
    this.reader.pause();
    this.clearDrainTimer();
  }

  resume(): void {
    this.paused = false;
    this.reader.resume();
    if (this.drain) this.armDrainTimer();
  }

  forceClose(): void {
    this.finish();
  }

  signal(signal: NodeJS.Signals): void {
    signalChild(this.pid, signal, this.exitCode === undefined);
  }

  killTree(): void {
    killSession(this.pid, this.exitCode === undefined);
  }

  private onData(read: Buffer): void {
    if (this.finished) return;
    const bytes = this.queries ? this.queries.filter(read) : read;
    if (!this.drain) {
      this.batch.add(bytes);
      return;
    }
    this.armDrainTimer();
    const { output, found } = this.drain.push(bytes);
    if (output.length > 0) this.batch.add(output);
    if (found) this.exitDrained();
  }

  /**
   * Everything written before the exit has been read (or could not be told
   * apart in time): the exit is reported, and the terminal read on until the
   * last descriptor on its slave closes (EIO; at once if the child left none).
   */
  private exitDrained(): void {
    this.drain = undefined;
    this.clearDrainTimer();
    clearTimeout(this.quietDeadline);
    this.reportExit();
    this.closeSlave();
    if (this.inputEnded) this.finish();
  }

  private reportExit(): void {
    if (this.exitReported || this.exitCode === undefined) return;
    this.exitReported = true;
    const held = this.queries?.flush();
    if (held && held.length > 0) this.batch.add(held);
    this.batch.flush();
    this.events.exit(this.exitCode);
  }

  private onExit(code: number, signal: number): void {
    this.exitCode = signal ? { signal } : { code };
    if (this.inputEnded || this.slaveFd === undefined) {
      this.finishAfterQuiet();
      return;
    }
    const marker = newDrainMarker();
    try {
      fs.writeSync(this.slaveFd, marker);
    } catch {
      this.finishAfterQuiet(); // output stopped (^S) or terminal gone: drain by silence
      return;
    }
    this.drain = new MarkerSearch(marker);
    this.armDrainTimer();
  }

  /**
   * Without a marker: close our slave end and wait for EIO, or at most the drain's time. Unlike
   * the marker's wait, a pause does not stop that clock: with no marker, nothing tells output from
   * before the exit apart, and a job that keeps the terminal full (the usual reason the marker
   * could not be written) would otherwise hold the exit back for as long as the client is slow.
   */
  private finishAfterQuiet(): void {
    this.closeSlave();
    if (this.inputEnded) this.finish();
    else this.quietDeadline ??= setTimeout(() => this.exitDrained(), DRAIN_TIMEOUT_MS);
  }

  private onInputEnd(): void {
    this.inputEnded = true;
    if (this.exitCode !== undefined) this.finish();
  }

  private armDrainTimer(): void {
    this.clearDrainTimer();
    if (this.paused || this.finished) return;
    this.drainTimer = setTimeout(() => this.exitDrained(), DRAIN_TIMEOUT_MS);
  }

  private clearDrainTimer(): void {
    if (this.drainTimer) clearTimeout(this.drainTimer);
    this.drainTimer = undefined;
  }

  private finish(): void {
    if (this.finished) return;
    if (this.exitCode === undefined) return; // wait for the exit status
    this.finished = true;
    this.writer.stop();
    this.clearDrainTimer();
    clearTimeout(this.quietDeadline);
    this.reportExit();
    const held = this.queries?.flush();
    if (held && held.length > 0) this.batch.add(held);
    this.batch.end();
    this.closeSlave();
    this.reader.destroy();
    this.masters.delete(this.masterFd);
    this.events.close();
  }

  private closeSlave(): void {
    if (this.slaveFd === undefined) return;
    try {
      fs.closeSync(this.slaveFd);
    } catch {
      // already closed
    }
    this.slaveFd = undefined;
  }
}

function openSlave(name: string): number | undefined {
  try {
    const { O_RDWR, O_NOCTTY, O_NONBLOCK } = fs.constants;
    return fs.openSync(name, O_RDWR | O_NOCTTY | O_NONBLOCK);
  } catch {
    return undefined;
  }
}

/**
 * node-pty's fork runs `execvp(file, [file, ...args])`, so argv[0] is the
 * program name; where `close_range` is missing it marks close-on-exec only
 * the descriptors up to the first gap after 15; and it gives the terminal
 * settings of its own. Every PTY child execs through perl, which shows a
 * different argv[0] (`arg0`), closes descriptors node-pty could miss (other
 * PTYs' masters, a host's) and sets the reference's terminal settings,
 * without touching the environment. Without perl, only `arg0` is refused.
 */
function execPlan(request: SpawnRequest, closeDescriptors: boolean): { file: string; args: string[]; env: Record<string, string> } {
  const closeAbove = closeDescriptors ? 2 : undefined;
  const viaPerl = perlExec(request.file, request.argv0, request.args, request.env, { closeAbove, terminalDefaults: true });
  if (viaPerl) return viaPerl;
  if (request.argv0 === request.program) return { file: request.program, args: request.args, env: request.env };
  throw spawnError(systemError('ENOENT'));
}
