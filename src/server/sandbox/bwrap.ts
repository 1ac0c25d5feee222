/**
 * Confining a child with bubblewrap (`bwrap`, Debian's `bubblewrap`): the
 * whole file system read-only, the policy's writable paths bound
 * read-write, its read-only subpaths (a workspace's `.git`) bound over them,
 * a fresh /dev and /proc, its own user, pid, IPC and UTS namespaces, no
 * capabilities (a server running as root must not hand the child the power
 * to remount `/` or enter the host's namespaces), and no network when the
 * policy restricts it.
 *
 * The child's environment reaches it through bwrap's own (which only their
 * owner may read in /proc), not its command line (which any local user may
 * read): Codex hands its whole environment on, API keys among them. Only the
 * variables glibc acts on as a program loads and starts (`LD_PRELOAD` …)
 * stay out of the unconfined bwrap's environment and are set inside the
 * sandbox, with `--setenv`.
 *
 * Process-tree semantics stay ours: the server starts `bwrap` as the child
 * (its own group and session, as any child). bwrap's reaper is pid 1 of the
 * new pid namespace and dies with bwrap (`--die-with-parent`); when pid 1 of
 * a pid namespace dies the kernel kills everything in it, so killing the
 * child's group kills the whole confined tree.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Errors, type ProtocolError } from '../../protocol/errors.js';
import type { SandboxSupport } from '../environment-info.js';
import type { SpawnRequest } from '../process/child.js';
import { perlExec } from '../process/perl.js';
import type { Confinement } from './policy.js';
import { networkFilter } from './seccomp.js';

/** `bwrap` on `PATH` (or the given one); undefined if none is executable. */
export function findBwrap(explicit: string | undefined, searchPath = process.env.PATH ?? ''): string | undefined {
  const candidates = explicit
    ? [explicit]
    : searchPath
        .split(':')
        .filter(Boolean)
        .map((dir) => path.join(dir, 'bwrap'));
  const found = candidates.find(isExecutableFile);
  // Its real path: a relative one would be run from the child's cwd, a symlink could be pointed elsewhere.
  return found === undefined ? undefined : fs.realpathSync(found);
}

/** Whether `candidate` is a file this process may execute. */
export function isExecutableFile(candidate: string): boolean {
  try {
    // A missing candidate (most of PATH) is told without an exception: the first answer waits for this.
    if (!fs.statSync(candidate, { throwIfNoEntry: false })?.isFile()) return false;
    fs.accessSync(candidate, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The real path of each existing entry, without duplicates (bwrap refuses a missing source). */
function existing(paths: string[]): string[] {
  const real = new Set<string>();
  for (const candidate of paths) {
    try {
      real.add(fs.realpathSync(candidate));
    } catch {
      // missing: nothing to bind
    }
  }
  return [...real];
}

/**
 * The variables glibc acts on while it loads and starts a program (its
 * "unsecure" list, and the dynamic loader's): in the environment of the
 * unconfined bwrap, the code or data they name would be loaded outside the sandbox.
 */
const LOADER_VARIABLES = new Set([
  'GCONV_PATH',
  'GETCONF_DIR',
  'GLIBC_TUNABLES',
  'HOSTALIASES',
  'LOCALDOMAIN',
  'LOCPATH',
  'NIS_PATH',
  'NLSPATH',
  'RESOLV_HOST_CONF',
  'RES_OPTIONS',
  'TMPDIR',
  'TZDIR',
]);
const isLoaderVariable = (name: string) => name.startsWith('LD_') || name.startsWith('MALLOC_') || LOADER_VARIABLES.has(name);

/** The child's environment split in two: what bwrap may carry in its own environment, and what is set inside (`--setenv`). */
export function splitEnvironment(env: Record<string, string | undefined>): {
  carried: Record<string, string>;
  setInside: Record<string, string>;
} {
  // No prototype: a variable named `__proto__` is a member like any other.
  const carried: Record<string, string> = Object.create(null);
  const setInside: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(env)) if (value !== undefined) (isLoaderVariable(name) ? setInside : carried)[name] = value;
  return { carried, setInside };
}

/**
 * The parts of /proc that reach the whole machine, bound read-only over the
 * fresh /proc (the list Docker keeps read-only). Dropped capabilities do not
 * guard them: a server running as root stays uid 0 inside, and the kernel
 * lets uid 0 write /proc/sys (kernel.core_pattern names a program it runs as
 * root) and /proc/sysrq-trigger by their modes alone.
 */
const MACHINE_WIDE_PROC = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

/** The namespaces and privileges every confined child gets (a user namespace where the machine allows one). */
const ISOLATION = ['--die-with-parent', '--unshare-user-try', '--cap-drop', 'ALL', '--unshare-pid', '--unshare-ipc', '--unshare-uts'];

/**
 * bwrap's arguments for `confinement`, up to and including `--`. The child's
 * environment is bwrap's own, plus `setInside` (see `splitEnvironment`).
 */
export function bwrapArgs(confinement: Confinement, cwd: string, tty: boolean, setInside: Record<string, string> = {}): string[] {
  // The root read-only, unless the policy leaves the whole file system writable (only the network cut).
  const rootWritable = confinement.writable.includes('/');
  const args = [...ISOLATION, rootWritable ? '--bind' : '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  for (const part of MACHINE_WIDE_PROC) if (fs.existsSync(part)) args.push('--ro-bind', part, part);
  // A PTY child keeps its controlling terminal; a pipe child gets a new session, so it cannot push input into the server's terminal.
  if (!tty) args.push('--new-session');
  if (confinement.noNetwork) args.push('--unshare-net');
  const writable = existing([...confinement.writable, ...(confinement.pinned ?? [])]).filter((dir) => dir !== '/');
  const mounts = [
    ...writable.map((dir) => ({ at: dir, args: ['--bind', dir, dir] })),
    ...existing(confinement.readOnly).map((dir) => ({ at: dir, args: ['--ro-bind', dir, dir] })),
    // bwrap creates each stand-in's mount point; `synthetic-mounts.ts` removes it afterwards.
    ...confinement.synthetic.map((stand) => ({ at: stand, args: ['--perms', '0555', '--tmpfs', stand, '--remount-ro', stand] })),
  ];
  // Shallower first, so that the most specific path wins (as in the reference); for one path, read-only last.
  const depth = (at: string) => at.split(path.sep).filter(Boolean).length;
  for (const mount of mounts.sort((a, b) => depth(a.at) - depth(b.at))) args.push(...mount.args);
  for (const [name, value] of Object.entries(setInside)) args.push('--setenv', name, value);
  args.push('--chdir', cwd, '--');
  return args;
}

/**
 * The same start, confined: bwrap runs the program by its resolved path.
 * perl runs it inside the sandbox when bwrap cannot: for an explicit `arg0`
 * (bwrap 0.8 cannot set argv[0], perl's `exec {file} @argv` can), and to
 * install the network filter of a restricted network (`seccomp.ts`) just
 * before the program. A restricted network that cannot be filtered here is
 * refused rather than half enforced.
 */
export function confined(request: SpawnRequest, confinement: Confinement, bwrap: string, tty: boolean): SpawnRequest {
  const filter = confinement.noNetwork ? networkFilter() : undefined;
  if (confinement.noNetwork && !filter) throw Errors.sandboxUnenforceable(`a restricted network on ${process.arch}`);
  const needsPerl = request.argv0 !== request.program || filter !== undefined;
  const viaPerl = needsPerl ? perlExec(request.file, request.argv0, request.args, request.env, { seccompFilter: filter }) : undefined;
  if (needsPerl && !viaPerl) throw Errors.sandboxUnenforceable('a restricted network or an arg0 without perl');
  const inner = viaPerl ? [viaPerl.file, ...viaPerl.args] : [request.file, ...request.args];
  const { carried, setInside } = splitEnvironment(viaPerl?.env ?? request.env);
  const args = [...bwrapArgs(confinement, request.cwd, tty, setInside), ...inner];
  return { ...request, program: bwrap, file: bwrap, argv0: bwrap, args, env: carried };
}

/** Why no sandbox can be had: no bwrap on PATH, or the one given with `--bwrap` (`given`) is not there to run. */
export function bwrapMissing(given: string | undefined): ProtocolError {
  return given === undefined ? Errors.sandboxUnavailable() : Errors.givenBwrapUnusable(given);
}

/**
 * Whether a sandboxed start can be confined here, given the bwrap found for it now (it may be installed
 * meanwhile) and the one the server was given, if any.
 */
export function sandboxSupport(bwrap: string | undefined, given: string | undefined): SandboxSupport {
  return bwrap
    ? { available: true, type: 'linuxSeccomp' }
    : { available: false, type: 'linuxSeccomp', reason: bwrapMissing(given).message };
}
