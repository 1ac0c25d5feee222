/**
 * perl, for two exec tricks Node cannot do itself: setting argv[0] under a
 * PTY (node-pty's fork uses the program name), and closing descriptors that
 * lack close-on-exec before a pipe child runs. `findPerl` also serves the
 * spawner (`spawner.ts`), perl's third job.
 */
import fs from 'node:fs';

/**
 * POSIX only when there are descriptors to close, and then its XS half only:
 * POSIX.pm took several times longer to load than perl takes to start.
 */
const CLOSE_AND_EXEC =
  'my $n = shift; if ($n) { require XSLoader; XSLoader::load("POSIX"); POSIX::close(shift) for 1 .. $n } my $file = shift; exec {$file} @ARGV or die "$!\\n"';

let cached: string | null | undefined;

export function findPerl(): string | undefined {
  if (cached === undefined) cached = ['/usr/bin/perl', '/bin/perl'].find((candidate) => fs.existsSync(candidate)) ?? null;
  return cached ?? undefined;
}

/**
 * The command that closes `closeFds`, then runs `file` with `argv0` as its
 * argv[0] and `args` after it; undefined when perl is not installed.
 */
export function perlExec(file: string, argv0: string, args: string[], closeFds: number[] = []): [string, string[]] | undefined {
  const perl = findPerl();
  if (!perl) return undefined;
  return [perl, ['-e', CLOSE_AND_EXEC, String(closeFds.length), ...closeFds.map(String), file, argv0, ...args]];
}
