/**
 * perl, for two exec tricks Node cannot do itself: setting argv[0] under a
 * PTY (node-pty's fork uses the program name), and closing descriptors that
 * lack close-on-exec before a child runs. `findPerl` also serves the
 * spawner (`spawner.ts`), perl's third job.
 */
import fs from 'node:fs';

/**
 * `$above` < 0: close nothing. Otherwise every descriptor above it goes,
 * each through a handle perl opens on it (`<&=`, or `>&=` for a write-only
 * one): loading POSIX for its `close` took several times longer than perl
 * takes to start.
 */
const CLOSE_AND_EXEC = `my $above = shift;
if ($above >= 0 && opendir(my $dir, '/proc/self/fd')) {
  my @fds = grep { /^\\d+$/ && $_ > $above && $_ != fileno($dir) } readdir $dir;
  closedir $dir;
  for my $fd (@fds) { (open(my $h, '<&=', $fd) || open($h, '>&=', $fd)) && close($h) }
}
my $file = shift; exec {$file} @ARGV or die "$!\\n"`;

let cached: string | null | undefined;

export function findPerl(): string | undefined {
  if (cached === undefined) cached = ['/usr/bin/perl', '/bin/perl'].find((candidate) => fs.existsSync(candidate)) ?? null;
  return cached ?? undefined;
}

/**
 * The command that runs `file` with `argv0` as its argv[0] and `args`
 * after it, having closed every descriptor above `closeAbove` (none when
 * undefined); undefined when perl is not installed. Linux: the descriptors
 * are listed from /proc/self/fd.
 */
export function perlExec(file: string, argv0: string, args: string[], closeAbove?: number): [string, string[]] | undefined {
  const perl = findPerl();
  if (!perl) return undefined;
  return [perl, ['-e', CLOSE_AND_EXEC, '--', String(closeAbove ?? -1), file, argv0, ...args]];
}
