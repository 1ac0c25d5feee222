/**
 * Finds the program a `process/start` will run and checks it the way exec
 * would, so that failures are a −32603 answer instead of a child that prints
 * an error and exits 1 (node-pty's fork cannot report exec failures).
 *
 * Rules (PROTOCOL.md §3.2): a name with `/` is a path (relative to the
 * child's cwd); a bare name is searched in `env.PATH`, falling back to the
 * server's PATH in pipe mode only; the cwd only where PATH names it (an empty
 * entry, or `.`), as the reference's execvp does.
 */
import fs from 'node:fs';
import path from 'node:path';
import { systemError } from '../os-error.js';

export interface ResolveInput {
  program: string;
  cwd: string;
  env: Record<string, string>;
  tty: boolean;
  /** A `#!` script's or an ELF binary's interpreter must be there too (generation 2 refuses a PTY start without one, as the reference does). */
  checkInterpreter?: boolean;
}

function checkExecutable(file: string, checkInterpreter = false): void {
  const stat = fs.statSync(file);
  // exec runs regular files only (and the open below would wait for a FIFO's writer, holding the loop).
  if (!stat.isFile()) throw systemError('EACCES');
  fs.accessSync(file, fs.constants.X_OK);
  checkFormat(file, checkInterpreter);
}

/** The interpreter a `#!` line names (the kernel reads the first 256 bytes), if absolute; it must exist. */
function checkShebang(head: Buffer, read: number): void {
  const line = head.toString('latin1', 2, read).split('\n')[0]!.trim();
  const interpreter = line.split(/[ \t]/)[0]!;
  if (interpreter.startsWith('/')) fs.statSync(interpreter); // ENOENT, ENOTDIR: as exec would say
}

/**
 * The ELF machines this kernel runs, by `process.arch`, as [class, e_machine]
 * (a 32-bit binary of the same family too): anything else is ENOEXEC.
 */
const RUNNABLE_ELF: Record<string, Array<[number, number]>> = {
  x64: [
    [2, 62], // x86-64
    [1, 3], // i386
  ],
  arm64: [
    [2, 183], // AArch64
    [1, 40], // ARM
  ],
};

/**
 * Exec accepts `#!` scripts and ELF binaries for this machine; anything else
 * is ENOEXEC, which exec would not report: the final exec goes through
 * `execvp` (perl's, node-pty's), which runs a file the kernel refuses as a
 * shell script instead (a foreign binary then fails with a syntax error).
 */
function checkFormat(file: string, checkInterpreter: boolean): void {
  const head = Buffer.alloc(256);
  const fd = fs.openSync(file, 'r');
  try {
    let read: number;
    try {
      read = fs.readSync(fd, head, 0, head.length, 0);
    } catch {
      return; // unreadable but executable: let exec decide
    }
    if (read >= 2 && head[0] === 0x23 && head[1] === 0x21) {
      if (checkInterpreter) checkShebang(head, read); // #!
      return;
    }
    const isElf = read >= 4 && head[0] === 0x7f && head.toString('latin1', 1, 4) === 'ELF';
    if (!isElf || !runsHere(head, read)) throw systemError('ENOEXEC');
    if (checkInterpreter) checkElfInterpreter(fd, head);
  } finally {
    fs.closeSync(fd);
  }
}

/** PT_INTERP: the program header naming the dynamic loader. */
const PT_INTERP = 3;
/** The size of a 64-bit ELF program header: any other makes the kernel refuse the file (ENOEXEC). */
const PROGRAM_HEADER_BYTES = 56;
/** The longest loader name the kernel reads (with its NUL). */
const PATH_MAX = 4096;

/**
 * The loader a 64-bit dynamically linked binary names must exist (ENOENT
 * otherwise, as exec says); a program header table the kernel would not
 * take is ENOEXEC, a loader name past the end of the file EIO.
 */
function checkElfInterpreter(fd: number, head: Buffer): void {
  if (head[4] !== 2) return; // 32-bit: left to exec
  const fileBytes = fs.fstatSync(fd).size;
  const tableAt = Number(head.readBigUInt64LE(32));
  const [entryBytes, count] = [head.readUInt16LE(54), head.readUInt16LE(56)];
  if (entryBytes !== PROGRAM_HEADER_BYTES || count < 1 || tableAt + entryBytes * count > fileBytes) throw systemError('ENOEXEC');
  const table = Buffer.alloc(entryBytes * count);
  fs.readSync(fd, table, 0, table.length, tableAt);
  for (let at = 0; at < table.length; at += entryBytes) {
    if (table.readUInt32LE(at) !== PT_INTERP) continue;
    const [offset, size] = [Number(table.readBigUInt64LE(at + 8)), Number(table.readBigUInt64LE(at + 32))];
    if (size < 2 || size > PATH_MAX) throw systemError('ENOEXEC');
    if (offset + size > fileBytes) throw systemError('EIO');
    const name = Buffer.alloc(size);
    fs.readSync(fd, name, 0, size, offset);
    const loader = name.toString('latin1').split('\0')[0]!;
    if (loader.startsWith('/')) fs.statSync(loader); // a relative one is the child's business
    return;
  }
}

/** Whether an ELF header (its first `read` bytes in `head`) is for this machine; unknown machines are left to exec. */
function runsHere(head: Buffer, read: number): boolean {
  const runnable = RUNNABLE_ELF[process.arch];
  if (!runnable) return true;
  if (read < 20 || head[5] !== 1) return false; // truncated, or not little-endian
  const elfClass = head[4];
  const machine = head.readUInt16LE(18);
  return runnable.some(([wantedClass, wantedMachine]) => elfClass === wantedClass && machine === wantedMachine);
}

/**
 * The directory the child starts in, unresolved: the kernel follows `..`
 * after a symlink physically, as the child's chdir will (the reference does
 * not normalize `cwd` lexically, unlike fs paths). An empty cwd is ENOENT, as chdir("").
 */
export function checkDirectory(cwd: string): string {
  if (cwd === '') throw systemError('ENOENT');
  const absolute = path.isAbsolute(cwd) ? cwd : `${process.cwd()}/${cwd}`;
  const stat = fs.statSync(absolute);
  if (!stat.isDirectory()) throw systemError('ENOTDIR');
  fs.accessSync(absolute, fs.constants.X_OK);
  return absolute;
}

/** Returns the absolute path of the program, or throws a system error. */
export function resolveProgram({ program, cwd, env, tty, checkInterpreter }: ResolveInput): string {
  if (program.includes('/')) {
    // Joined, not resolved: `../x` from a symlinked cwd is found where exec finds it.
    const file = path.isAbsolute(program) ? program : `${cwd}/${program}`;
    checkExecutable(file, checkInterpreter);
    return file;
  }
  const searchPath = env.PATH ?? (tty ? undefined : process.env.PATH);
  if (searchPath === undefined) throw systemError('ENOENT');
  let firstError: unknown;
  for (const dir of searchPath.split(':')) {
    // An empty or relative entry names the child's cwd (or a place under it), as for execvp and the reference.
    const file = path.isAbsolute(dir) ? path.join(dir, program) : `${cwd}/${dir === '' ? '' : `${dir}/`}${program}`;
    try {
      checkExecutable(file, checkInterpreter);
      return file;
    } catch (error) {
      if ((error as { code?: string }).code !== 'ENOENT') firstError ??= error;
    }
  }
  throw firstError ?? systemError('ENOENT');
}
