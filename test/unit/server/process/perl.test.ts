import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type PerlCommand, perlExec } from '../../../../src/server/process/perl.js';

const ENV = { PATH: '/usr/bin:/bin' };

/**
 * Runs the command perlExec gives with extra descriptors open as fds 3
 * (read-only) and 4 (write-only), perl started with `switches` first; its
 * stdout, after checking that perl said nothing on stderr.
 */
function run(command: PerlCommand, switches: string[] = []): string {
  const readOnly = fs.openSync('/dev/null', 'r');
  const writeOnly = fs.openSync('/dev/null', 'w');
  try {
    const stdio = ['ignore', 'pipe', 'pipe', readOnly, writeOnly];
    const result = spawnSync(command.file, [...switches, ...command.args], { stdio, env: command.env, encoding: 'utf8' });
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
    expect(run(perlExec('/bin/sh', 'named', PROBE, ENV)!)).toBe('fd 3 open\nfd 4 open\nargv0 named\n');
  });

  it('closes every descriptor above the one it is given, read-only and write-only, before the program runs', () => {
    expect(run(perlExec('/bin/sh', 'named', PROBE, ENV, { closeAbove: 2 })!)).toBe('fd 3 closed\nfd 4 closed\nargv0 named\n');
    expect(run(perlExec('/bin/sh', 'named', PROBE, ENV, { closeAbove: 3 })!)).toBe('fd 3 open\nfd 4 closed\nargv0 named\n');
  });

  it("starts perl without the dynamic loader's variables, and sets them for the program", () => {
    const env = { ...ENV, LD_LIBRARY_PATH: '/nonexistent/lib', GCONV_PATH: '/nonexistent/gconv', LD_EMPTY: '' };
    const command = perlExec('/bin/sh', 'sh', ['-c', 'echo "$LD_LIBRARY_PATH|$GCONV_PATH|$PATH"; env | grep -c "^LD_EMPTY=$"'], env, {
      closeAbove: 2,
    })!;
    expect(Object.keys(command.env).filter((name) => name.startsWith('LD_') || name === 'GCONV_PATH')).toEqual([]);
    expect(run(command)).toBe('/nonexistent/lib|/nonexistent/gconv|/usr/bin:/bin\n1\n');
  });

  it('is clean under strict and warnings', () => {
    for (const closeAbove of [undefined, 2]) {
      expect(run(perlExec('/bin/sh', 'named', PROBE, ENV, { closeAbove })!, ['-Mstrict', '-w'])).toContain('argv0 named\n');
    }
  });

  it("starts without what would change perl's start-up, and gives the program the environment as it was", () => {
    const env = {
      ...ENV,
      LANG: 'xx_XX.UTF-8',
      LC_ALL: 'xx_XX.UTF-8',
      PERL5OPT: '-Mstrict -T',
      PERL_BADLANG: '1',
      PERL_HASH_SEED_DEBUG: '1',
    };
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions, for sh to expand
    const show = ['-c', 'echo "$PERL5OPT|${PERL_BADLANG-unset}|${PERL_SKIP_LOCALE_INIT-unset}|$PERL_HASH_SEED_DEBUG|$LANG"'];
    expect(run(perlExec('/bin/sh', 'sh', show, env, { closeAbove: 2 })!)).toBe('-Mstrict -T|1|unset|1|xx_XX.UTF-8\n');
    expect(run(perlExec('/bin/sh', 'sh', show, { ...ENV, PERL_SKIP_LOCALE_INIT: '' })!)).toBe('|unset|||\n');
  });

  it('fails with the OS error when the program cannot run', () => {
    const { file, args, env } = perlExec('/nonexistent/program', 'x', [], ENV)!;
    const result = spawnSync(file, args, { env, encoding: 'utf8' });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toBe('No such file or directory\n');
  });
});
