/** resolveProgram checks a program the way exec would: malformed ELF binaries and special files are refused with exec's errors. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveProgram } from '../../../../src/server/process/resolve-program.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resolve-program-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A copy of /bin/true (a 64-bit dynamically linked binary here), changed in place by `edit`. */
function binary(name: string, edit: (bytes: Buffer) => void = () => undefined): string {
  const file = path.join(dir, name);
  const bytes = Buffer.from(fs.readFileSync(fs.realpathSync('/bin/true')));
  edit(bytes);
  fs.writeFileSync(file, bytes, { mode: 0o755 });
  return file;
}

/** The offset of the first PT_INTERP program header of a 64-bit ELF. */
function interpHeader(bytes: Buffer): number {
  const table = Number(bytes.readBigUInt64LE(32));
  for (let i = 0; i < bytes.readUInt16LE(56); i++) if (bytes.readUInt32LE(table + i * 56) === 3) return table + i * 56;
  throw new Error('no PT_INTERP');
}

const resolve = (program: string, checkInterpreter = true) => {
  try {
    return resolveProgram({ program, cwd: dir, env: { PATH: '/usr/bin:/bin' }, tty: true, checkInterpreter });
  } catch (error) {
    return (error as NodeJS.ErrnoException).code;
  }
};

describe.skipIf(process.arch !== 'x64')('resolveProgram on malformed 64-bit ELF binaries (generation 2, PTY)', () => {
  it('refuses a program header table the kernel would not take (ENOEXEC), and a loader name past the end (EIO)', () => {
    expect(resolve(binary('no-entries', (b) => b.writeUInt16LE(0, 54)))).toBe('ENOEXEC');
    expect(resolve(binary('no-headers', (b) => b.writeUInt16LE(0, 56)))).toBe('ENOEXEC');
    expect(resolve(binary('far-table', (b) => b.writeBigUInt64LE(2n ** 60n, 32)))).toBe('ENOEXEC');
    expect(resolve(binary('far-loader', (b) => b.writeBigUInt64LE(BigInt(b.length + 100), interpHeader(b) + 8)))).toBe('EIO');
    const missing = binary('no-loader', (b) => b.write('X', b.indexOf('/lib64/ld-linux') + 1, 'latin1'));
    expect(resolve(missing)).toBe('ENOENT');
    expect(resolve(missing, false)).toBe(missing); // generation 1 leaves it to exec
    expect(resolve(binary('intact'))).toBe(path.join(dir, 'intact'));
  });
});

describe('resolveProgram on special files', () => {
  it('refuses an executable FIFO at once (EACCES, as exec), instead of waiting for its writer', () => {
    const fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', ['-m', '755', fifo]);
    expect(resolve(fifo)).toBe('EACCES');
    expect(resolve(fifo, false)).toBe('EACCES');
  });
});
