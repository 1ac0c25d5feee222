/**
 * The programs the server runs outside every sandbox: bwrap and perl for
 * each confined start and fs call, and node at the server's next start. A
 * writable root that holds one of them would let a confined child replace
 * it, and its next run would be unconfined: such a policy is refused, as the
 * reference refuses one that leaves it no bwrap outside the writable roots.
 * (The server's own code is kept read-only instead: `protected-paths.ts`.)
 */
import fs from 'node:fs';
import { Errors } from '../../protocol/errors.js';
import { findPerl } from '../process/perl.js';
import { isBelow, realOrSelf } from './protected-paths.js';

/** The real paths of the programs run outside the sandbox, those that exist. */
function hostPrograms(bwrap: string | undefined): string[] {
  const programs = [bwrap, findPerl(), process.execPath].filter((program) => program !== undefined);
  return [...new Set(programs.filter((program) => fs.existsSync(program)).map((program) => realOrSelf(program)))];
}

/** Refuses writable roots (as given, and as their real paths) that hold a host program; `bwrap` is the one in use, if any. */
export function refuseWritableHostPrograms(writable: string[], bwrap: string | undefined): void {
  const programs = hostPrograms(bwrap);
  for (const root of writable)
    for (const base of new Set([root, realOrSelf(root)]))
      for (const program of programs)
        if (program === base || isBelow(program, base))
          throw Errors.sandboxUnenforceable(`the writable ${root}, which holds ${program}, a program this server runs outside the sandbox`);
}
