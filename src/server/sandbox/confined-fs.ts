/**
 * fs writes under a sandbox policy, confined by the kernel rather than by
 * checking paths: each write runs in a short-lived helper process under
 * bwrap with the policy's mounts (`/` read-only, the writable roots bound
 * read-write), so symlinks, `..` and races resolve inside the sandbox, as in
 * Codex 0.169 (whose helper runs under bwrap and seccomp, one per call).
 * A denied write fails as the kernel says: −32603 `Read-only file system
 * (os error 30)`. Reads are not confined: every policy accepted here lets
 * the whole file system be read.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { packageFile } from '../../package/files.js';
import { Errors, ProtocolError } from '../../protocol/errors.js';
import { perlExec } from '../process/perl.js';
import type { ProcessRuntime } from '../process/runtime.js';
import { bwrapArgs, bwrapMissing } from './bwrap.js';
import { type Confinement, confinementOf } from './policy.js';

/** The helper, as tsc builds it (the bundled CLI runs it from there too). */
const HELPER = (): string => packageFile('dist/server/fs/confined-helper.js');

export type ConfinedOp = 'writeFile' | 'createDirectory' | 'remove' | 'copy' | 'truncate';

/** A confined write that takes longer than this is killed and fails (a FIFO can block it forever). */
const HELPER_TIMEOUT_MS = 30_000;

export class FsSandbox {
  private readonly helpers = new Set<ChildProcess>();

  constructor(
    /** The bwrap to use (default: `bwrap` on PATH). */
    private readonly bwrapPath: string | undefined,
    private readonly tmpdir: string | undefined,
    /**
     * The runtime whose first-spawn duties run before each helper is spawned (`prepare`), and
     * which says whether a child must close what lacks close-on-exec first: bwrap would pass it
     * into the sandbox.
     */
    private readonly runtime: Pick<ProcessRuntime, 'prepare' | 'childrenCloseDescriptors' | 'syntheticMounts' | 'bwraps'>,
  ) {}

  /** What an fs call's `sandbox` asks for (undefined: nothing); refuses what cannot be enforced. */
  confinement(sandbox: unknown): Confinement | undefined {
    return confinementOf(sandbox, this.tmpdir, () => this.runtime.bwraps.find(this.bwrapPath));
  }

  /** Kills helpers still running (the session is ending): their requests fail. */
  stopAll(): void {
    for (const helper of this.helpers) helper.kill('SIGKILL');
  }

  /** Runs `op` in the helper under `confinement`; its result, or its error as a `ProtocolError`. */
  run<T>(confinement: Confinement, op: ConfinedOp, params: object, data?: Buffer): Promise<T> {
    const bwrap = this.runtime.bwraps.find(this.bwrapPath);
    if (!bwrap) return Promise.reject(bwrapMissing(this.bwrapPath));
    const held = this.runtime.syntheticMounts.hold(confinement);
    const args = [...bwrapArgs(held.confinement, '/', false), process.execPath, HELPER(), op, JSON.stringify(params)];
    this.runtime.prepare();
    return new Promise<T>((resolve, reject) => {
      const viaPerl = this.runtime.childrenCloseDescriptors() ? perlExec(bwrap, bwrap, args, {}, { closeAbove: 2 }) : undefined;
      const command = viaPerl ?? { file: bwrap, args, env: {} };
      const child = spawn(command.file, command.args, { stdio: ['pipe', 'pipe', 'pipe'], env: command.env });
      this.helpers.add(child);
      const timer = setTimeout(() => child.kill('SIGKILL'), HELPER_TIMEOUT_MS);
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (bytes: Buffer) => out.push(bytes));
      child.stderr.on('data', (bytes: Buffer) => err.push(bytes));
      child.stdin.on('error', () => undefined); // the helper may not read it
      child.on('error', (error) => {
        held.release();
        reject(Errors.internal(`confined fs helper: ${error.message}`, error));
      });
      child.on('close', () => {
        clearTimeout(timer);
        held.release();
        this.helpers.delete(child);
        try {
          const answer = JSON.parse(Buffer.concat(out).toString('utf8')) as { result?: T; error?: { code: number; message: string } };
          if (answer.error) reject(new ProtocolError(answer.error.code, answer.error.message));
          else resolve(answer.result as T);
        } catch {
          reject(
            Errors.internal(
              `confined fs helper failed: ${Buffer.concat(err).toString('utf8').trim() || 'no answer (killed, or timed out)'}`,
            ),
          );
        }
      });
      child.stdin.end(data ?? Buffer.alloc(0));
    });
  }
}
