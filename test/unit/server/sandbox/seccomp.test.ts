import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ARCH_TABLES, networkFilter } from '../../../../src/server/sandbox/seccomp.js';

/** `#define __NR_<name> <number>` lines of a kernel header, if installed. */
function kernelNumbers(header: string): Map<string, number> | undefined {
  if (!fs.existsSync(header)) return undefined;
  const numbers = new Map<string, number>();
  for (const [, name, value] of fs.readFileSync(header, 'utf8').matchAll(/^#define __NR_(\w+)\s+(\d+)\s*$/gm))
    numbers.set(name!, Number(value));
  return numbers;
}

describe('the network filter', () => {
  it.each([
    ['x64', '/usr/include/x86_64-linux-gnu/asm/unistd_64.h'],
    ['arm64', '/usr/include/asm-generic/unistd.h'],
  ])('uses the kernel’s call numbers on %s', (arch, header) => {
    const numbers = kernelNumbers(header);
    if (!numbers) return; // headers not installed here
    const table = ARCH_TABLES[arch]!;
    const named = { ...table.denied, ...table.socketFamilies, prctl: table.prctl, seccomp: table.seccomp };
    for (const [name, nr] of Object.entries(named)) expect([name, numbers.get(name)]).toEqual([name, nr]);
  });

  it('is a whole BPF program of 8-byte instructions that ends in its deny return, in the form perl takes', () => {
    const [prctl, seccomp, hex] = networkFilter('x64')!.split(':');
    expect([prctl, seccomp]).toEqual(['157', '317']);
    const program = Buffer.from(hex!, 'hex');
    expect(program.length % 8).toBe(0);
    expect(program.readUInt16LE(program.length - 8)).toBe(0x06); // ret
    expect(program.readUInt32LE(program.length - 4)).toBe(0x00050001); // errno EPERM
    expect(networkFilter('riscv64')).toBeUndefined();
  });
});
