/**
 * The process table of one connection (§3): start, read, write, terminate, resize, signal;
 * retention after close; flow control; and the clean end of everything (EXT-DRAIN).
 */
import type { Base64Decoder } from '../../protocol/base64.js';
import type { DecodedParamsOf } from '../../protocol/methods.js';
import { Errors } from '../../protocol/errors.js';
import type { ProcessReadResult, WriteStatus } from '../../protocol/types.js';
import { spawnError } from '../os-error.js';
import type { Child, SpawnRequest } from './child.js';
import { refuseUnsupported } from '../unsupported-requests.js';
import { bwrapMissing, confined } from '../sandbox/bwrap.js';
import { confinementOf } from '../sandbox/policy.js';
import type { HeldConfinement } from '../sandbox/synthetic-mounts.js';
import { buildEnvironment, loginShell, sortedByName } from './env-policy.js';
import { ManagedProcess, type ProcessEventSink } from './managed-process.js';
import { PipeChild } from './pipe-child.js';
import { PtyChild } from './pty-child.js';
import type { ProcessRuntime } from './runtime.js';
import { checkDirectory, resolveProgram } from './resolve-program.js';
import { ReapedLeaders } from './leftovers.js';
import { signalByName } from './signals.js';
import { execMetadataProblem } from '../../protocol/exec-metadata.js';
import { RETENTION_AFTER_CLOSE_MS } from '../../protocol/defaults.js';

const PIPE_CLOSE_GRACE_MS = 2000; // EXT-DRAIN: how long escaped descendants may hold a pipe open after exit
const DEFAULT_SIZE = { rows: 24, cols: 80 };
type StartParams = DecodedParamsOf<'process/start'>;
type ReadParams = DecodedParamsOf<'process/read'>;
type WriteParams = DecodedParamsOf<'process/write'>;

/** `sandboxType` in a generation-2 start result: Codex's name for a Linux sandbox, or none. */
export type SandboxType = 'none' | 'linuxSeccomp';

export interface ProcessManagerOptions {
  /** The guardian, spawner and PTY registry to use (see `runtime.ts`). */
  runtime: ProcessRuntime;
  /** How long a closed process stays readable (default: as the client's generation, `RETENTION_AFTER_CLOSE_MS`). */
  retentionMs?: number;
  /** The bwrap that confines sandboxed starts (default: `bwrap` on PATH). */
  bwrap?: string;
  /** The environment `envPolicy` inherits from (default: this process's). */
  serverEnv?: NodeJS.ProcessEnv;
}

export class ProcessManager {
  private readonly processes = new Map<string, ManagedProcess>();
  private readonly runtime: ProcessRuntime;
  private readonly retentionMs: number | undefined;
  private readonly serverEnv: NodeJS.ProcessEnv;
  private readonly bwrapPath: string | undefined;
  private paused = false;
  private waitsReleased = false;
  private retentionHeld = false;
  /** The timers that forget closed processes, by id. */
  private readonly retention = new Map<string, NodeJS.Timeout>();
  private readonly reapedLeaders: ReapedLeaders;

  constructor(
    private readonly sink: ProcessEventSink,
    options: ProcessManagerOptions,
  ) {
    this.runtime = options.runtime;
    this.reapedLeaders = new ReapedLeaders(this.runtime.guardian);
    this.retentionMs = options.retentionMs;
    this.serverEnv = options.serverEnv ?? process.env;
    this.bwrapPath = options.bwrap;
  }

  async start(params: StartParams): Promise<{ processId: string; sandboxType?: SandboxType }> {
    const { processId, argv, tty } = params;
    if (argv.length === 0) throw Errors.emptyArgv();
    if (this.processes.has(processId)) throw Errors.processExists(processId);
    refuseUnsupported(params);
    const { request, held } = this.confine(this.spawnRequest(params), params.sandbox, tty);
    const process = new ManagedProcess(processId, tty, !tty && params.pipeStdin === true, this.sink, this.runtime.outputSlabs);
    process.sandboxed = params.sandbox != null; // any policy sent, as `sandboxType` (and the reference's sandboxDenied)
    this.processes.set(processId, process);
    this.runtime.prepare();
    let child: Child;
    try {
      child = tty ? PtyChild.spawn(request, process, this.runtime) : await PipeChild.spawn(request, process, this.runtime);
    } catch (error) {
      this.processes.delete(processId);
      process.settleStart();
      held?.release();
      throw error;
    }
    process.child = child;
    process.settleStart();
    if (this.paused) child.pause();
    this.runtime.guardian.watch(child.pid);
    process.onClosed = () => {
      held?.release(); // the sandbox's pid namespace is gone with bwrap: nothing uses its stand-ins
      this.reapedLeaders.add(child.pid); // the guardian keeps it too, for what it left behind
      this.retain(processId, process);
    };
    if (this.sink.generation() === 1) return { processId };
    // As the reference: any policy sent (a disabled or external one too) is answered with the platform's sandbox type.
    return { processId, sandboxType: process.sandboxed ? 'linuxSeccomp' : 'none' };
  }

  /** The start confined by its policy (its stand-ins held until it is gone), or as it is without one. */
  private confine(request: SpawnRequest, sandbox: unknown, tty: boolean): { request: SpawnRequest; held?: HeldConfinement } {
    const findBwrap = () => this.runtime.bwraps.find(this.bwrapPath);
    const confinement = confinementOf(sandbox, request.env.TMPDIR ?? this.serverEnv.TMPDIR, findBwrap);
    if (!confinement) return { request };
    const bwrap = findBwrap();
    if (!bwrap) throw bwrapMissing(this.bwrapPath); // never run unconfined
    const held = this.runtime.syntheticMounts.hold(confinement);
    try {
      return { request: confined(request, held.confinement, bwrap, tty), held };
    } catch (error) {
      held.release(); // its stand-ins were made: nothing will use them
      throw error;
    }
  }

  private spawnRequest(params: StartParams): SpawnRequest {
    const { argv, env, tty } = params;
    const generation2 = this.sink.generation() === 2;
    const program = argv[0]!;
    const argv0 = params.arg0 ?? program;
    const metadataProblem = generation2 ? execMetadataProblem(params.metadata) : undefined;
    if (metadataProblem) throw Errors.badMetadata(metadataProblem);
    const hasNul = (text: string) => text.includes('\0');
    if (argv.some(hasNul) || hasNul(argv0)) throw Errors.nulByte();
    // Generation 2 words a NUL in the environment or cwd otherwise (a later check in the reference's spawn).
    const nulAtSpawn = () => (generation2 ? Errors.nulByteAtSpawn() : Errors.nulByte());
    if (Object.entries(env).some(([k, v]) => hasNul(k) || hasNul(v))) throw nulAtSpawn();
    if (program === '') throw Errors.missingProgram(tty);
    const built = params.envPolicy ? buildEnvironment(params.envPolicy, this.serverEnv, env) : sortedByName(env);
    if (hasNul(params.cwd) || Object.entries(built).some(([k, v]) => hasNul(k) || hasNul(v))) throw nulAtSpawn();
    const childEnv = tty && built.SHELL === undefined ? sortedByName({ ...built, SHELL: loginShell() }) : built;
    try {
      const cwd = checkDirectory(params.cwd);
      const file = resolveProgram({ program, cwd, env: built, tty, checkInterpreter: tty && generation2 });
      return {
        program,
        file,
        argv0,
        args: argv.slice(1),
        cwd,
        env: childEnv,
        pipeStdin: params.pipeStdin === true,
        size: params.size ?? DEFAULT_SIZE,
        answerTerminalQueries: tty && generation2,
      };
    } catch (error) {
      throw spawnError(error);
    }
  }

  /**
   * The process, once its start is over. A request pipelined behind its
   * `process/start` waits for the spawn (which may wait for pipes, see
   * `pipe-pool.ts`) rather than see `starting`: EXT-CONCURRENCY rule 3.
   */
  private async settled(processId: string): Promise<ManagedProcess | undefined> {
    let process = this.processes.get(processId);
    while (process?.starting) {
      await process.whenStarted;
      process = this.processes.get(processId);
    }
    return process;
  }

  private async lookup(processId: string): Promise<ManagedProcess> {
    const process = await this.settled(processId);
    if (!process) throw Errors.unknownProcess(processId);
    return process;
  }

  async read(params: ReadParams): Promise<ProcessReadResult> {
    const process = await this.lookup(params.processId);
    return process.read({
      afterSeq: params.afterSeq ?? 0,
      maxBytes: params.maxBytes ?? undefined,
      waitMs: params.waitMs ?? 0,
      stopWaiting: () => this.waitsReleased,
    });
  }

  async write(params: WriteParams, decodeBase64: Base64Decoder): Promise<{ status: WriteStatus }> {
    // In the reference's order: the chunk's base64 first, then the writeId.
    const decoded = decodeBase64(params.chunk);
    if (!decoded.ok) throw Errors.invalidParams(decoded.error);
    if (this.sink.generation() === 2 && params.writeId == null) {
      throw params.writeId === null ? Errors.nullWriteId() : Errors.missingWriteId();
    }
    const writeId = params.writeId ?? undefined;
    if (writeId === '') throw Errors.emptyWriteId();
    const process = await this.settled(params.processId);
    if (!process) return { status: 'unknownProcess' };
    if (writeId !== undefined && process.writeIds.has(writeId)) return { status: 'accepted' }; // a retried write
    if (params.closeStdin === true && process.tty) throw Errors.closeStdinOnPty();
    if (!process.tty && (!process.pipeStdin || process.stdinClosed)) return { status: 'stdinClosed' };
    if (process.terminated) throw Errors.stdinWriteFailed();
    if (!process.closed) process.child!.write(decoded.bytes); // a job it left may still read it (as the reference's)
    if (params.closeStdin === true) {
      process.stdinClosed = true;
      process.child!.closeStdin();
    }
    if (writeId !== undefined) process.writeIds.add(writeId);
    return { status: 'accepted' };
  }

  async terminate(processId: string): Promise<{ running: boolean }> {
    const process = await this.settled(processId);
    if (!process || process.exited || !process.child) return { running: false };
    process.terminated = true;
    process.child.killTree();
    return { running: true };
  }

  async resize(processId: string, rows: number, cols: number): Promise<Record<string, never>> {
    const process = await this.lookup(processId);
    if (!process.tty) throw Errors.notATty(processId);
    if (!process.exited) process.child?.resize(rows, cols);
    return {};
  }

  async signal(processId: string, name: string): Promise<Record<string, never>> {
    const signal = signalByName(name);
    if (!signal) throw this.sink.generation() === 2 ? Errors.unknownSignalVariant(name) : Errors.unsupportedSignal(name);
    // Generation 2 signals an unknown process as a gone one, `{}` (Codex 0.169); our generation-1 extension names it.
    const process = this.sink.generation() === 2 ? await this.settled(processId) : await this.lookup(processId);
    if (process && !process.exited && process.child) process.child.signal(signal);
    return {};
  }

  /** Keeps a closed process readable for `retentionMs` (or, while retention is held, until it is released). */
  private retain(processId: string, process: ManagedProcess): void {
    clearTimeout(this.retention.get(processId));
    this.retention.delete(processId);
    if (this.retentionHeld) return;
    const timer = setTimeout(() => {
      this.retention.delete(processId);
      if (this.processes.get(processId) !== process) return;
      this.processes.delete(processId);
      process.forget();
    }, this.retentionMs ?? RETENTION_AFTER_CLOSE_MS[this.sink.generation()]);
    this.retention.set(processId, timer.unref());
  }

  /**
   * While held (a detached session: nobody can read yet), closed processes
   * are not forgotten; on release each gets its full retention again.
   */
  holdRetention(held: boolean): void {
    if (held === this.retentionHeld) return;
    this.retentionHeld = held;
    for (const [processId, process] of this.processes) if (process.closed) this.retain(processId, process);
  }

  /** Flow control: the client is not reading; stop reading from children. */
  pauseAll(): void {
    if (this.paused) return;
    this.paused = true;
    for (const process of this.processes.values()) process.child?.pause();
  }

  resumeAll(): void {
    if (!this.paused) return;
    this.paused = false;
    for (const process of this.processes.values()) process.child?.resume();
  }

  /** Ends pending long-polls now, with their current state (EXT-SIGNALS). */
  releaseWaiters(): void {
    this.waitsReleased = true;
    for (const process of this.processes.values()) process.wake();
  }

  /**
   * EXT-DRAIN step 4: SIGKILL every process that has not exited and what closed ones left
   * running (`leftovers.ts`), and wait until each one has emitted `exited` and `closed`
   * (giving up on pipes held open by escaped descendants after `PIPE_CLOSE_GRACE_MS`).
   */
  async shutdown(): Promise<void> {
    this.reapedLeaders.killAll();
    const open = [...this.processes.values()].filter((process) => !process.closed && process.child);
    for (const process of open) {
      // Also after the leader exited: what it left in its session holds the pipes.
      process.child!.killTree();
      void process.whenExited.then(() => {
        setTimeout(() => process.child!.forceClose(), PIPE_CLOSE_GRACE_MS).unref();
      });
    }
    await Promise.all(open.map((process) => process.whenClosed));
  }

  /** Kills every process group at once, without waiting (stdout broke, second signal). */
  killAll(): void {
    this.reapedLeaders.killAll();
    for (const process of this.processes.values()) {
      if (!process.closed) process.child?.killTree();
    }
  }
}
