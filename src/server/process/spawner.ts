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
 * `spawner-script.ts`.
 *
 * Where perl or /proc is missing, or the spawner dies, `spawn` returns
 * undefined (or rejects with `SpawnerUnavailable`) and the caller falls
 * back to node:child_process.
 */
import { spawn as spawnProcess, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { systemError } from '../os-error.js';
import type { ExitStatus, SpawnRequest } from './child.js';
import { killGroup } from './kill.js';
import { findPerl } from './perl.js';
import { SPAWNER_SCRIPT } from './spawner-script.js';

/** A running child's pipes and its exit, as the server sees them. */
export interface SpawnedChild {
  pid: number;
  stdin: net.Socket | undefined;
  stdout: net.Socket;
  stderr: net.Socket;
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
  private static instance: Spawner | undefined | null;
  private readonly process: ChildProcess;
  private readonly starts = new Map<string, PendingStart>();
  private readonly exits = new Map<number, (status: ExitStatus) => void>();
  private readonly pipeBatches = new Map<string, (pipes: HeldPipe[]) => void>();
  private nextId = 1;
  private partial = '';
  private dead = false;
  /** `R` lines not yet sent: they ride along with the next write (see `release`). */
  private releases = '';
  private releaseTimer: NodeJS.Timeout | undefined;

  /** The spawner of this Node process, started on first use; undefined if it cannot run. */
  static shared(): Spawner | undefined {
    if (Spawner.instance === undefined) Spawner.instance = Spawner.launch();
    if (Spawner.instance?.dead) Spawner.instance = null;
    return Spawner.instance ?? undefined;
  }

  private static launch(): Spawner | null {
    const perl = findPerl();
    if (!perl || !fs.existsSync('/proc/self/fd')) return null;
    try {
      // An empty environment: PERL5OPT and friends must not change the spawner (children get their own).
      return new Spawner(spawnProcess(perl, ['-e', SPAWNER_SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'], env: {} }));
    } catch {
      return null;
    }
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
    const env = Object.entries(request.env);
    const fields = [id, request.file, request.cwd, request.pipeStdin ? '1' : '0', String(request.args.length + 1), request.argv0, ...request.args, String(env.length), ...env.flat()];
    const payload = Buffer.from(fields.join('\0'));
    return new Promise((resolve, reject) => {
      this.starts.set(id, { resolve, reject });
      this.updateRef();
      this.process.stdin!.write(Buffer.concat([Buffer.from(`${this.takeReleases()}${payload.length}\n`), payload]));
    });
  }

  private onData(text: string): void {
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop()!;
    for (const line of lines) {
      const fields = line.split(' ');
      if (fields[0] === 'P') this.onPipes(fields.slice(1));
      else this.onLine(fields);
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
      this.process.stdin!.write(`${this.takeReleases()}P ${batch} ${count}\n`);
    });
  }

  /** Opens a new descriptor on one of the spawner's, through /proc (throws if /proc refuses). */
  reopen(spawnerFd: number, flags: number): number {
    return fs.openSync(`/proc/${this.process.pid}/fd/${spawnerFd}`, flags);
  }

  private onPipes([batch, ...fds]: string[]): void {
    const resolve = this.pipeBatches.get(batch!);
    this.pipeBatches.delete(batch!);
    const pipes: HeldPipe[] = [];
    for (let i = 0; i + 1 < fds.length; i += 2) pipes.push({ id: `${batch}.${i / 2}`, readFd: Number(fds[i]), writeFd: Number(fds[i + 1]) });
    resolve?.(pipes);
  }

  private onLine([kind, first, second, ...rest]: string[]): void {
    if (kind === 'X') {
      const status = Number(second);
      const report = this.exits.get(Number(first));
      this.exits.delete(Number(first));
      report?.((status & 0x7f) === 0 ? { code: status >> 8 } : { signal: status & 0x7f });
      return;
    }
    const start = this.starts.get(first!);
    if (!start) return;
    this.starts.delete(first!);
    if (kind === 'F') {
      start.reject(systemError(ERRNO_NAMES.get(Number(second)) ?? 'EIO'));
      return;
    }
    const pid = Number(second);
    try {
      start.resolve(this.adopt(pid, rest));
    } catch {
      // /proc would not give us the pipes (hidepid, a sandbox): never try again.
      killGroup(pid);
      start.reject(new SpawnerUnavailable());
      this.die();
    } finally {
      this.release(first!);
    }
  }

  /** Opens our ends of a started child's pipes. */
  private adopt(pid: number, [stdinFd, stdoutFd, stderrFd]: string[]): SpawnedChild {
    const ends: Array<[string, number]> = [[stdoutFd!, O_RDONLY], [stderrFd!, O_RDONLY]];
    if (stdinFd !== '-') ends.push([stdinFd!, O_WRONLY]);
    const fds: number[] = [];
    try {
      for (const [fd, flags] of ends) fds.push(fs.openSync(`/proc/${this.process.pid}/fd/${fd}`, flags | O_NONBLOCK));
    } catch (error) {
      for (const fd of fds) fs.closeSync(fd);
      throw error;
    }
    const [stdout, stderr, stdin] = fds.map((fd, index) => new net.Socket({ fd, readable: index < 2, writable: index === 2 }));
    const exited = new Promise<ExitStatus>((resolve) => this.exits.set(pid, resolve));
    const closeStdin = () => {
      this.flushReleases();
      stdin?.end();
    };
    return { pid, stdin, stdout: stdout!, stderr: stderr!, exited, closeStdin };
  }

  /**
   * Lets the spawner close its copies of a child's pipes. Not urgent (the
   * server's ends are open), so it waits for the next write to the spawner
   * or a few milliseconds: waking the spawner now would compete with the
   * child for the CPU. A child's stdin sees EOF only after this, so
   * `closeStdin` flushes at once.
   */
  release(id: string): void {
    this.releases += `R ${id}\n`;
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
