import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { perlExec } from '../../../../src/server/process/perl.js';

/** Runs the command perlExec gives with extra descriptors open as fds 3 (read-only) and 4 (write-only); its stdout. */
function run(command: [string, string[]]): string {
  const readOnly = fs.openSync('/dev/null', 'r');
  const writeOnly = fs.openSync('/dev/null', 'w');
  try {
    const stdio = ['ignore', 'pipe', 'pipe', readOnly, writeOnly];
    const result = spawnSync(command[0], command[1], { stdio, encoding: 'utf8' });
    expect(result.stderr).toBe('');
    return result.stdout;
  } finally {
    fs.closeSync(readOnly);
    fs.closeSync(writeOnly);
  }
}

const PROBE = ['-c', 'for fd in 3 4; do [ -e /dev/fd/$fd ] && echo "fd $fd open" || echo "fd $fd closed"; done; echo "argv0 $0"'];

describe.skipIf(!fs.existsSync('/usr/bin/perl') && !fs.existsSync('/bin/perl'))('perlExec', () => {
  it('sets argv[0] and leaves descriptors alone when told to close none', () => {
    expect(run(perlExec('/bin/sh', 'named', PROBE)!)).toBe('fd 3 open\nfd 4 open\nargv0 named\n');
  });

  it('closes every descriptor above the one it is given, read-only and write-only, before the program runs', () => {
    expect(run(perlExec('/bin/sh', 'named', PROBE, 2)!)).toBe('fd 3 closed\nfd 4 closed\nargv0 named\n');
    expect(run(perlExec('/bin/sh', 'named', PROBE, 3)!)).toBe('fd 3 open\nfd 4 closed\nargv0 named\n');
  });

  it('fails with the OS error when the program cannot run', () => {
    const [file, args] = perlExec('/nonexistent/program', 'x', [])!;
    const result = spawnSync(file, args, { encoding: 'utf8' });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toBe('No such file or directory\n');
  });
});
