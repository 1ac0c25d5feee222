/**
 * Files shipped in the package beside the code (the spawner's perl, the
 * confined fs helper, package.json), and the code a server runs, found from
 * the package root, so that the same code works from tsc's output, from the
 * bundled CLI and from the sources under test.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/** The directory of this package's package.json, found by walking up from this module. */
function packageRoot(): string {
  if (root) return root;
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest) && (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: string }).name === 'exec-server') {
      root = dir;
      return dir;
    }
    if (dir === path.dirname(dir)) throw new Error('exec-server: cannot find its package.json');
  }
}

/** The absolute path of a file in the package, e.g. `dist/server/process/spawner.pl`. */
export function packageFile(relative: string): string {
  return path.join(packageRoot(), relative);
}

let version: string | undefined;
/** This package's version. */
export function packageVersion(): string {
  version ??= (JSON.parse(fs.readFileSync(packageFile('package.json'), 'utf8')) as { version: string }).version;
  return version;
}

/** The packages the server loads on first use, from outside its own files. */
const LOADED_LATER = ['undici', 'ws', 'node-pty'];

let code: string[] | undefined;
/**
 * The real paths of the code an unconfined server runs: its own `dist` (the
 * bundle, the spawner's perl, the confined fs helper), its package.json
 * (where `npx` finds the entry point) and the packages it loads on first
 * use. Kept read-only inside every sandbox, so that a confined child cannot
 * rewrite what the server runs next.
 */
export function serverCode(): string[] {
  code ??= [packageFile('dist'), packageFile('package.json'), ...LOADED_LATER.map(packageDirectory)].flatMap((candidate) => {
    try {
      return candidate === undefined ? [] : [fs.realpathSync(candidate)];
    } catch {
      return [];
    }
  });
  return code;
}

/** The directory of the installed package `name`, as Node resolves it from here. */
function packageDirectory(name: string): string | undefined {
  try {
    const entry = createRequire(import.meta.url).resolve(name);
    const marker = `${path.sep}node_modules${path.sep}${name}${path.sep}`;
    const at = entry.lastIndexOf(marker);
    return at === -1 ? undefined : entry.slice(0, at + marker.length - 1);
  } catch {
    return undefined;
  }
}
