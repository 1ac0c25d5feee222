/** perl, for the two exec tricks Node cannot do itself (argv[0] under a PTY, closing fds). */
import fs from 'node:fs';

let cached: string | null | undefined;

export function findPerl(): string | undefined {
  if (cached === undefined) cached = ['/usr/bin/perl', '/bin/perl'].find((candidate) => fs.existsSync(candidate)) ?? null;
  return cached ?? undefined;
}
