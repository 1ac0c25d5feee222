/**
 * The spawner: a small perl process that forks and execs pipe children for
 * the server, so that starting a process does not cost a fork of the server.
 *
 * Why: fork() copies the parent's page tables, so Node's spawn slows down
 * as the server's memory grows (figures in `pipe-child.ts`, where the
 * choice between the two is made). The spawner stays a few MiB whatever the
 * server holds.
 *
 * The child's pipes are created by the spawner; the server opens its own
 * ends through `/proc/<spawner>/fd/<n>` (a pipe reopened that way is the
 * same pipe) and then tells the spawner to close its copies. The spawner
 * reaps the children and reports their wait status. Protocol: see
 * `spawner-protocol.ts`.
 *
 * Where perl or /proc is missing, or the spawner dies, `spawn` returns
 * undefined (or rejects with `SpawnerUnavailable`) and the caller falls
 * back to node:child_process.
 */
import { spawn as spawnProcess, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { packageFile } from '../../package/files.js';
import { systemError } from '../os-error.js';
import type { ExitStatus, SpawnRequest } from './child.js';
import { killGroup } from './kill.js';
import { OutputPipe, type ChildOutput } from './output-pipe.js';
import { findPerl } from './perl.js';
import { encodePipeRequest, encodeRelease, encodeStart, LineSplitter, parseSpawnerLine, type SpawnerMessage } from './spawner-protocol.js';

/** The perl program, shipped in the package (the build copies it into dist). */
const spawnerScript = (): string => packageFile('dist/server/process/spawner.pl');

/** setsid(2)'s syscall number, which spawner.pl calls without loading POSIX (0: it loads POSIX). */
const SETSID_SYSCALL: Partial<Record<NodeJS.Architecture, number>> = { x64: 112, arm64: 157, riscv64: 157, loong64: 157 };
/** execve(2)'s, with which spawner.pl hands a child its whole environment at once (0: perl's exec). */
const EXECVE_SYSCALL: Partial<Record<NodeJS.Architecture, number>> = { x64: 59, arm64: 221, riscv64: 221, loong64: 221 };

/** A running child's pipes and its exit, as the server sees them. */
export interface SpawnedChild {
  pid: number;
  stdin: net.Socket | undefined;
  stdout: ChildOutput;
  stderr: ChildOutput;
  /** Resolves with how the child ended. */
  exited: Promise<ExitStatus>;
  /** Ends the child's stdin (after anything else holding it open let go). */
  closeStdin(): void;
}

/** A pipe made by the spawner and held open there until `release(id)`. */
export interface HeldPipe {
  id: string;
  readFd: number;
  writeFd: number;
}

/** The spawner cannot start this child (it died, or /proc refused): use Node's spawn. */
export class SpawnerUnavailable extends Error {}

interface PendingStart {
  resolve(child: SpawnedChild): void;
  reject(error: Error): void;
}

const RELEASE_DELAY_MS = 10;
const ERRNO_NAMES = new Map(Object.entries(os.constants.errno).map(([name, number]) => [number, name]));
const { O_RDONLY, O_WRONLY, O_NONBLOCK } = fs.constants;
const SIGKILL = os.constants.signals.SIGKILL;

export class Spawner {
  private readonly process: ChildProcess;
  private readonly starts = new Map<string, PendingStart>();
  private readonly exits = new Map<number, (status: ExitStatus) => void>();
  private readonly pipeBatches = new Map<string, (pipes: HeldPipe[]) => void>();
  private nextId = 1;
  private readonly lines = new LineSplitter();
  private dead = false;
  /** `R` lines not yet sent: they ride along with the next write (see `release`). */
  private releases = '';
  private releaseTimer: NodeJS.Timeout | undefined;

  /** Starts a spawner; undefined without perl or /proc. */
  static launch(): Spawner | undefined {
    const perl = findPerl();
    if (!perl || !fs.existsSync('/proc/self/fd')) return undefined;
    try {
      // An empty environment: PERL5OPT and friends must not change the spawner (children get their own).
      const args = [spawnerScript(), String(SETSID_SYSCALL[process.arch] ?? 0), String(EXECVE_SYSCALL[process.arch] ?? 0)];
      return new Spawner(spawnProcess(perl, args, { stdio: ['pipe', 'pipe', 'inherit'], env: {} }));
    } catch {
      return undefined;
    }
  }

  /** Lets the spawner exit (it ends at EOF); its owner's processes must be gone. */
  stop(): void {
    this.flushReleases();
    this.process.stdin!.end();
  }

  /** False once the spawner has died: its owner then launches no other. */
  get alive(): boolean {
    return !this.dead;
  }

  private constructor(child: ChildProcess) {
    this.process = child;
    child.on('error', () => this.die());
    child.on('exit', () => this.die());
    child.stdin!.on('error', () => this.die());
    child.stdout!.setEncoding('latin1');
    child.stdout!.on('data', (text: string) => this.onData(text));
    child.stdout!.on('end', () => this.die());
    // Idle, the spawner must not keep the server's event loop alive.
    child.unref();
    (child.stdin as net.Socket).unref();
    this.updateRef();
  }

  /** Starts `request`; rejects with a system error if chdir or exec fails. */
  spawn(request: SpawnRequest): Promise<SpawnedChild> | undefined {
    if (this.dead) return undefined;
    const id = String(this.nextId++);
    return new Promise((resolve, reject) => {
      this.starts.set(id, { resolve, reject });
      this.updateRef();
      this.process.stdin!.write(Buffer.concat([Buffer.from(this.takeReleases()), encodeStart(id, request)]));
    });
  }

  private onData(text: string): void {
    for (const line of this.lines.push(text)) {
      const message = parseSpawnerLine(line);
      if (message) this.onMessage(message);
    }
    this.updateRef();
  }

  /** Asks for `count` fresh pipes (fewer if the spawner runs out of descriptors; none if it died). */
  makePipes(count: number): Promise<HeldPipe[]> {
    if (this.dead) return Promise.resolve([]);
    const batch = `p${this.nextId++}`;
    return new Promise((resolve) => {
      this.pipeBatches.set(batch, resolve);
      this.updateRef();
      this.process.stdin!.write(this.takeReleases() + encodePipeRequest(batch, count));
    });
  }

  /** Opens a new descriptor on one of the spawner's, through /proc (throws if /proc refuses). */
  reopen(spawnerFd: number, flags: number): number {
    return fs.openSync(`/proc/${this.process.pid}/fd/${spawnerFd}`, flags);
  }

  private onMessage(message: SpawnerMessage): void {
    if (message.type === 'pipes') {
      this.pipeBatches.get(message.batch)?.(message.pipes);
      this.pipeBatches.delete(message.batch);
      return;
    }
    if (message.type === 'reaped') {
      this.exits.get(message.pid)?.(message.status);
      this.exits.delete(message.pid);
      return;
    }
    const start = this.starts.get(message.id);
    if (!start) return;
    this.starts.delete(message.id);
    if (message.type === 'failed') {
      start.reject(systemError(ERRNO_NAMES.get(message.errno) ?? 'EIO'));
      return;
    }
    try {
      start.resolve(this.adopt(message));
    } catch {
      // /proc would not give us the pipes (hidepid, a sandbox): never try again.
      killGroup(message.pid);
      start.reject(new SpawnerUnavailable());
      this.die();
    } finally {
      this.release(message.id);
    }
  }

  /** Opens our ends of a started child's pipes. */
  private adopt({ pid, stdinFd, stdoutFd, stderrFd }: Extract<SpawnerMessage, { type: 'started' }>): SpawnedChild {
    const ends: Array<[number, number]> = [
      [stdoutFd, O_RDONLY],
      [stderrFd, O_RDONLY],
    ];
    if (stdinFd !== undefined) ends.push([stdinFd, O_WRONLY]);
    const fds: number[] = [];
    try {
      for (const [fd, flags] of ends) fds.push(fs.openSync(`/proc/${this.process.pid}/fd/${fd}`, flags | O_NONBLOCK));
    } catch (error) {
      for (const fd of fds) fs.closeSync(fd);
      throw error;
    }
    const [stdoutEnd, stderrEnd, stdinEnd] = fds as [number, number, number | undefined];
    const stdout = new OutputPipe(stdoutEnd);
    const stderr = new OutputPipe(stderrEnd);
    const stdin = stdinEnd === undefined ? undefined : new net.Socket({ fd: stdinEnd, readable: false, writable: true });
    const exited = new Promise<ExitStatus>((resolve) => this.exits.set(pid, resolve));
    const closeStdin = () => {
      this.flushReleases();
      stdin?.end();
    };
    return { pid, stdin, stdout, stderr, exited, closeStdin };
  }

  /**
   * Lets the spawner close its copies of a child's pipes. Not urgent (the
   * server's ends are open), so it waits for the next write to the spawner
   * or a few milliseconds: waking the spawner now would compete with the
   * child for the CPU. A child's stdin sees EOF only after this, so
   * `closeStdin` flushes at once.
   */
  release(id: string): void {
    this.releases += encodeRelease(id);
    this.releaseTimer ??= setTimeout(() => this.flushReleases(), RELEASE_DELAY_MS).unref();
  }

  flushReleases(): void {
    const releases = this.takeReleases();
    if (releases && !this.dead) this.process.stdin!.write(releases);
  }

  private takeReleases(): string {
    clearTimeout(this.releaseTimer);
    this.releaseTimer = undefined;
    const releases = this.releases;
    this.releases = '';
    return releases;
  }

  /** Keeps the event loop alive only while a start or an exit is outstanding. */
  private updateRef(): void {
    const stdout = this.process.stdout as net.Socket;
    if (this.starts.size > 0 || this.exits.size > 0 || this.pipeBatches.size > 0) stdout.ref();
    else stdout.unref();
  }

  /**
   * The spawner is gone (killed from outside): starts in flight go to the
   * fallback, and its children, whose exit we could no longer learn, are
   * killed and reported as killed by a signal.
   */
  private die(): void {
    if (this.dead) return;
    this.dead = true;
    for (const start of this.starts.values()) start.reject(new SpawnerUnavailable());
    for (const resolve of this.pipeBatches.values()) resolve([]);
    this.pipeBatches.clear();
    for (const [pid, report] of this.exits) {
      killGroup(pid);
      report({ signal: SIGKILL });
    }
    this.starts.clear();
    this.exits.clear();
    this.process.stdout?.destroy();
  }
}
