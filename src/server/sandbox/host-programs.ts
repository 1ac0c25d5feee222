/**
 * The programs the server runs outside every sandbox: bwrap and perl for
 * each confined start and fs call, and node at the server's next start. A
 * writable root that holds one of them, a symlink on the way to one, or the
 * libraries they load would let a confined child replace what runs next
 * unconfined: such a policy is refused, as the reference refuses one that
 * leaves it no bwrap outside the writable roots. (The server's own code is
 * kept read-only instead: `protected-paths.ts`.)
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
 * the program itself is at the end. Resolved as the kernel does, one name at
 * a time (`..` goes up from where a link led, not from the text before it).
 */
function pathsTo(program: string): string[] {
  const passed: string[] = [];
  let rest = (path.isAbsolute(program) ? program : `${process.cwd()}/${program}`).split('/');
  let current = '/';
  for (let links = 0; rest.length > 0; ) {
    const name = rest.shift()!;
    if (name === '' || name === '.') continue;
    if (name === '..') {
      current = path.dirname(current);
      continue;
    }
    const next = current === '/' ? `/${name}` : `${current}/${name}`;
    if (!fs.lstatSync(next, { throwIfNoEntry: false })?.isSymbolicLink()) {
      current = next;
      continue;
    }
    passed.push(next);
    if (++links > MAX_LINKS) return passed; // ELOOP for exec too
    const target = fs.readlinkSync(next);
    if (target.startsWith('/')) current = '/';
    rest = [...target.split('/'), ...rest];
  }
  return [...passed, current];
}

/**
 * Where the dynamic loader of those programs reads from: the directories of
 * the libraries this process has mapped (bwrap and perl load theirs from the
 * same system directories) and the loader's own files in /etc, which a child
 * could otherwise fill with code for the next unconfined run.
 */
function loaderPaths(): string[] {
  let maps = '';
  try {
    maps = fs.readFileSync('/proc/self/maps', 'latin1');
  } catch {
    // no /proc: the loader's files in /etc only
  }
  const libraries = maps.split('\n').map((line) => line.split(/\s+/)[5] ?? '');
  const directories = libraries.filter((file) => file.startsWith('/') && /\.so(\.|$)/.test(file)).map((file) => path.dirname(file));
  return [...new Set([...directories, '/etc/ld.so.preload', '/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d'])];
}

/** Every path on the way to each program run outside the sandbox, those that exist. */
function hostProgramPaths(bwrap: string | undefined): Array<{ program: string; at: string }> {
  const programs = [bwrap, findPerl(), process.execPath].filter((program) => program !== undefined && fs.existsSync(program));
  // Its real path too, however the walk went.
  return programs.flatMap((program) =>
    [...pathsTo(program as string), realOrSelf(program as string)].map((at) => ({ program: program as string, at })),
  );
}

/** Refuses writable roots (as given, and as their real paths) that hold a host program or a link on its way; `bwrap` is the one in use, if any. */
export function refuseWritableHostPrograms(writable: string[], bwrap: string | undefined): void {
  const paths = hostProgramPaths(bwrap);
  const loader = loaderPaths();
  const reaches = (base: string, at: string) => at === base || isBelow(at, base);
  for (const root of writable)
    for (const base of new Set([root, realOrSelf(root)])) {
      for (const { program, at } of paths)
        if (reaches(base, at)) {
          const how = at === realOrSelf(program) ? `holds ${at}` : `holds ${at}, on the way to ${program}`;
          throw Errors.sandboxUnenforceable(`the writable ${root}, which ${how}, a program this server runs outside the sandbox`);
        }
      const library = loader.find((at) => reaches(base, at));
      if (library !== undefined)
        throw Errors.sandboxUnenforceable(
          `the writable ${root}, which holds ${library}, where programs this server runs outside the sandbox load their libraries from`,
        );
    }
}
