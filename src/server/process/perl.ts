/**
 * perl, for two exec tricks Node cannot do itself: setting argv[0] under a
 * PTY (node-pty's fork uses the program name), and closing descriptors that
 * lack close-on-exec before a child runs. `findPerl` also serves the
 * spawner (`spawner.ts`), perl's third job.
 */
import fs from 'node:fs';

/**
 * What perl would take from the child's environment at its own start-up:
 * warnings about a locale this machine lacks, `-M` modules and switches
 * (`PERL5OPT=-Mstrict` or `-T`), hash seed reports. perl starts without them and puts them
 * back for the program it runs.
 */
const PERL_OWN = ['PERL_BADLANG', 'PERL_SKIP_LOCALE_INIT', 'PERL5OPT', 'PERL_HASH_SEED_DEBUG'] as const;
const PERL_START: Record<(typeof PERL_OWN)[number], string | undefined> = {
  PERL_BADLANG: '0',
  PERL_SKIP_LOCALE_INIT: '1',
  PERL5OPT: undefined,
  PERL_HASH_SEED_DEBUG: undefined,
};

/**
 * The dynamic loader's variables (`LD_PRELOAD`, `LD_AUDIT`, `LD_LIBRARY_PATH`
 * …) and glibc's module path: code they name would run in perl itself, before
 * the seccomp filter is in place (a preloaded library could reach a host Unix
 * socket from a sandbox that cuts the network). perl starts without them and
 * sets them for the program only.
 */
const isDeferred = (name: string) => name.startsWith('LD_') || name === 'GCONV_PATH';

/**
 * A new PTY's settings as the reference's (PROTOCOL.md §3.8, Linux's): node-pty
 * sets `brkint ixany imaxbel hupcl` and 0xFF for `eol` and `eol2`, which
 * on Linux (where 0, not 0xFF, disables a character) made the byte 0xFF end a
 * line. perl reads the kernel's `struct termios` (TCGETS: four flag words, the
 * line discipline, 19 characters), clears those and writes it back (TCSETS).
 * The numbers are asm-generic's, which x86-64 and arm64 share.
 */
const TCGETS = 0x5401;
const TCSETS = 0x5402;
const CLEARED_INPUT_FLAGS = 0x2 | 0x800 | 0x2000; // BRKINT, IXANY, IMAXBEL
const HUPCL = 0x400;
const VEOL = 11;
const VEOL2 = 16;
const TERMIOS_ARCHES = new Set(['x64', 'arm64']);

/**
 * Arguments: the variables of PERL_OWN as the child must see them (`=value`,
 * or empty for unset), the number of deferred variables and their names and
 * values (`isDeferred`), whether to set the terminal's defaults (non-empty),
 * then `$above`: below 0, close nothing, else every
 * descriptor above it, each through a handle perl opens on it (loading
 * POSIX for its `close` took several times longer than perl takes to start),
 * then a seccomp filter to install (`sandbox/seccomp.ts`) or empty.
 */
const CLOSE_AND_EXEC = `for my $name (${PERL_OWN.map((name) => `'${name}'`).join(', ')}) {
  my $was = shift; if ($was eq '') { delete $ENV{$name} } else { $ENV{$name} = substr($was, 1) }
}
my $deferred = shift;
for (1 .. $deferred) { my $name = shift; $ENV{$name} = shift }
if (shift ne '') {
  my $termios = "\\0" x 64;
  if (ioctl(STDIN, ${TCGETS}, $termios)) {
    my ($in, $out, $control, $local, $line, @chars) = unpack('L4 C C19', $termios);
    $in &= ~${CLEARED_INPUT_FLAGS}; $control &= ~${HUPCL};
    $chars[${VEOL}] = 0; $chars[${VEOL2}] = 0;
    ioctl(STDIN, ${TCSETS}, pack('L4 C C19', $in, $out, $control, $local, $line, @chars));
  }
}
my $above = shift;
if ($above >= 0 && opendir(my $dir, '/proc/self/fd')) {
  my @fds = grep { /^\\d+$/ && $_ > $above && $_ != fileno($dir) } readdir $dir;
  closedir $dir;
  for my $fd (@fds) { my $h; (open($h, '<&=', $fd) || open($h, '>&=', $fd)) && close($h) }
}
my $filter = shift;
if ($filter ne '') {
  my ($prctl, $seccomp, $hex) = split /:/, $filter;
  my $program = pack('H*', $hex);
  syscall(0 + $prctl, 38, 1, 0, 0, 0) == 0 or die "exec-server: cannot set no_new_privs: $!\\n";
  syscall(0 + $seccomp, 1, 0, pack('S x6 P', length($program) / 8, $program)) == 0 or die "exec-server: cannot install the seccomp filter: $!\\n";
}
my $file = shift; exec {$file} @ARGV or die "$!\\n"`;

let cached: string | null | undefined;

export function findPerl(): string | undefined {
  if (cached === undefined) cached = ['/usr/bin/perl', '/bin/perl'].find((candidate) => fs.existsSync(candidate)) ?? null;
  return cached ?? undefined;
}

export interface PerlCommand {
  file: string;
  args: string[];
  /** perl's environment: the child's, but for what would change perl's own start-up. */
  env: Record<string, string>;
}

export interface PerlOptions {
  /** Close every descriptor above this one (none when undefined). Linux: listed from /proc/self/fd. */
  closeAbove?: number;
  /** The seccomp filter to install (`sandbox/seccomp.ts`), or none. */
  seccompFilter?: string;
  /** stdin is a new PTY's slave: give it the terminal settings of the reference's PTYs (`TERMINAL_DEFAULTS`). */
  terminalDefaults?: boolean;
}

/**
 * The command that runs `file` with `argv0` as its argv[0], `args` after it
 * and `env` as its environment, having done what `options` ask first;
 * undefined when perl is not installed.
 */
export function perlExec(
  file: string,
  argv0: string,
  args: string[],
  env: Record<string, string | undefined>,
  { closeAbove, seccompFilter, terminalDefaults = false }: PerlOptions = {},
): PerlCommand | undefined {
  const perl = findPerl();
  if (!perl) return undefined;
  // No prototype: a variable named `__proto__` is a member like any other.
  const perlEnv: Record<string, string> = Object.create(null);
  const deferred: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (isDeferred(name)) deferred.push(name, value);
    else perlEnv[name] = value;
  }
  const restore = PERL_OWN.map((name) => (env[name] === undefined ? '' : `=${env[name]}`));
  for (const name of PERL_OWN) {
    const value = PERL_START[name];
    if (value === undefined) delete perlEnv[name];
    else perlEnv[name] = value;
  }
  const terminal = terminalDefaults && TERMIOS_ARCHES.has(process.arch) ? '1' : '';
  const prelude = [...restore, String(deferred.length / 2), ...deferred, terminal, String(closeAbove ?? -1), seccompFilter ?? ''];
  return { file: perl, args: ['-e', CLOSE_AND_EXEC, '--', ...prelude, file, argv0, ...args], env: perlEnv };
}
