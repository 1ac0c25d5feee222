/**
 * The programs the server runs outside every sandbox: bwrap and perl for
 * each confined start and fs call, and node at the server's next start. A
 * writable root that holds one of them would let a confined child replace
 * it, and its next run would be unconfined: such a policy is refused, as the
 * reference refuses one that leaves it no bwrap outside the writable roots.
 * (The server's own code is kept read-only instead: `protected-paths.ts`.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { Errors } from '../../protocol/errors.js';
import { findPerl } from '../process/perl.js';
import { isBelow, realOrSelf } from './protected-paths.js';

/** How many symlinks a path may pass through, as Linux allows (ELOOP beyond). */
const MAX_LINKS = 40;

/**
 * Every path whose change would change what `program` runs: where each
 * symlink on the way to it lies (a child could point it elsewhere), and where
 * the program itself is at the end.
 */
function pathsTo(program: string): string[] {
  const passed: string[] = [];
  let pending = path.resolve(program);
  for (let links = 0; links <= MAX_LINKS; links++) {
    const parts = pending.split(path.sep).filter(Boolean);
    let current: string = path.sep;
    let redirected = false;
    for (const [index, part] of parts.entries()) {
      const next = path.join(current, part);
      if (fs.lstatSync(next, { throwIfNoEntry: false })?.isSymbolicLink()) {
        passed.push(next);
        pending = path.resolve(current, fs.readlinkSync(next), ...parts.slice(index + 1));
        redirected = true;
        break;
      }
      current = next;
    }
    if (!redirected) return [...passed, pending];
  }
  return passed;
}

/** Every path on the way to each program run outside the sandbox, those that exist. */
function hostProgramPaths(bwrap: string | undefined): Array<{ program: string; at: string }> {
  const programs = [bwrap, findPerl(), process.execPath].filter((program) => program !== undefined && fs.existsSync(program));
  return programs.flatMap((program) => pathsTo(program as string).map((at) => ({ program: program as string, at })));
}

/** Refuses writable roots (as given, and as their real paths) that hold a host program or a link on its way; `bwrap` is the one in use, if any. */
export function refuseWritableHostPrograms(writable: string[], bwrap: string | undefined): void {
  const paths = hostProgramPaths(bwrap);
  for (const root of writable)
    for (const base of new Set([root, realOrSelf(root)]))
      for (const { program, at } of paths)
        if (at === base || isBelow(at, base)) {
          const how = at === realOrSelf(program) ? `holds ${at}` : `holds ${at}, on the way to ${program}`;
          throw Errors.sandboxUnenforceable(`the writable ${root}, which ${how}, a program this server runs outside the sandbox`);
        }
}
