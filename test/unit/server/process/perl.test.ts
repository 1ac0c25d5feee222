import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { perlExec } from '../../../../src/server/process/perl.js';

/** Runs the command perlExec gives with an extra descriptor open as fd 3; its stdout. */
function run(command: [string, string[]]): string {
  const fd = fs.openSync('/dev/null', 'r');
  try {
    const result = spawnSync(command[0], command[1], { stdio: ['ignore', 'pipe', 'pipe', fd], encoding: 'utf8' });
    expect(result.stderr).toBe('');
    return result.stdout;
  } finally {
    fs.closeSync(fd);
  }
}

const PROBE = ['-c', '[ -e /dev/fd/3 ] && echo "fd 3 open" || echo "fd 3 closed"; echo "argv0 $0"'];

describe.skipIf(!fs.existsSync('/usr/bin/perl') && !fs.existsSync('/bin/perl'))('perlExec', () => {
  it('sets argv[0] and leaves descriptors alone when given none to close', () => {
    expect(run(perlExec('/bin/sh', 'named', PROBE)!)).toBe('fd 3 open\nargv0 named\n');
  });

  it('closes the descriptors it is given before the program runs', () => {
    expect(run(perlExec('/bin/sh', 'named', PROBE, [3])!)).toBe('fd 3 closed\nargv0 named\n');
  });

  it('fails with the OS error when the program cannot run', () => {
    const [file, args] = perlExec('/nonexistent/program', 'x', [])!;
    const result = spawnSync(file, args, { encoding: 'utf8' });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toBe('No such file or directory\n');
  });
});
