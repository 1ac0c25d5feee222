/**
 * Codex's sandbox policy (PROTOCOL-V2.md, appendix "sandboxed runs"), as a
 * generation-2 client sends it on `process/start`, reduced to what we
 * enforce: which paths are writable, which stay read-only inside them, and
 * whether the network is cut. A value we do not understand, or an unknown
 * member of a file-system entry (it could change what the entry allows), is
 * refused with a −32602 naming it; other unknown members are ignored, as the
 * reference ignores them.
 *
 * The policy Codex 0.169 sends for `--sandbox workspace-write`:
 *   file_system: restricted, entries: root → read; project_roots → write;
 *   slash_tmp → write; tmpdir → write; project_roots/.git, .agents, .codex,
 *   .aws → read (skipped when missing); network: restricted. Those four stay
 *   read-only under every writable root even when not listed, missing or not
 *   (`protected-paths.ts`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Errors } from '../../protocol/errors.js';
import { serverCode } from '../../package/files.js';
import { fileUriToPath, isFileUri } from '../../protocol/path-uri.js';
import { refuseWritableHostPrograms } from './host-programs.js';
import { protectReadOnly } from './protected-paths.js';
import { checkSandboxShape, networkOf } from './sandbox-shape.js';

export interface Confinement {
  /** Mounted writable; a deeper mount overrides a shallower one, whatever their kinds, as the reference's most specific entry wins. */
  writable: string[];
  /** Mounted read-only (over a writable mount of the same path). */
  readOnly: string[];
  /** Missing paths inside writable roots covered by an empty read-only directory, so that they cannot be created (`protected-paths.ts`). */
  synthetic: string[];
  /** Directories bound onto themselves, writable as before: a mount point cannot be renamed (`protected-paths.ts`). */
  pinned?: string[];
  /** True when the policy restricts the network (it is then unshared). */
  noNetwork: boolean;
}

interface Entry {
  path?: { type?: unknown; path?: unknown; value?: { kind?: unknown; subpath?: unknown } };
  access?: unknown;
  missing_path_behavior?: unknown;
}

const refuse = Errors.sandboxUnenforceable;
const UNRESTRICTED: Omit<Confinement, 'noNetwork'> = { writable: ['/'], readOnly: [], synthetic: [] };
const SPECIAL_KINDS = new Set(['root', 'project_roots', 'slash_tmp', 'tmpdir']);

function nativePath(value: unknown, member: string): string {
  if (typeof value !== 'string') throw refuse(`${member} is not a path`);
  return isFileUri(value) ? fileUriToPath(value) : value;
}

/** The directories a special path stands for. */
function resolveSpecial(kind: string, roots: string[], tmpdir: string | undefined): string[] {
  if (kind === 'root') return ['/'];
  if (kind === 'project_roots') return roots;
  if (kind === 'slash_tmp') return ['/tmp'];
  // A relative TMPDIR names nothing the child can rely on (resolved here, it would be the server's cwd).
  return tmpdir && path.isAbsolute(tmpdir) ? [tmpdir] : [];
}

/** The members an entry, its path and a special path's value may have: any other could change what the entry allows. */
const ENTRY_MEMBERS = {
  entry: ['path', 'access', 'missing_path_behavior'],
  'entry path': ['type', 'path', 'value'],
  'special path': ['kind', 'subpath'],
};

function refuseUnknownMembers(value: unknown, where: keyof typeof ENTRY_MEMBERS): void {
  if (value === null || typeof value !== 'object') return;
  const unknown = Object.keys(value).find((member) => !ENTRY_MEMBERS[where].includes(member));
  if (unknown !== undefined) throw refuse(`the ${where} member ${JSON.stringify(unknown)}`);
}

function entryPaths(entry: Entry, roots: string[], tmpdir: string | undefined): string[] {
  refuseUnknownMembers(entry, 'entry');
  refuseUnknownMembers(entry.path, 'entry path');
  refuseUnknownMembers(entry.path?.value, 'special path');
  const type = entry.path?.type;
  // `{type: "path", path}` names one absolute path (Codex 0.134's own profiles use it).
  if (type === 'path') return skipMissing(entry, [absolute(nativePath(entry.path?.path, 'a file_system entry path'))]);
  const kind = entry.path?.value?.kind;
  if (type !== 'special' || typeof kind !== 'string' || !SPECIAL_KINDS.has(kind)) {
    throw refuse(`a file_system entry of path ${JSON.stringify(entry.path ?? null)}`);
  }
  const subpath = entry.path?.value?.subpath;
  if (subpath !== undefined && (typeof subpath !== 'string' || subpath.split('/').includes('..')))
    throw refuse(`the subpath ${JSON.stringify(subpath)}`);
  const bases = resolveSpecial(kind, roots, tmpdir);
  return skipMissing(entry, subpath ? bases.map((base) => path.join(base, subpath)) : bases);
}

function absolute(candidate: string): string {
  if (!path.isAbsolute(candidate) || candidate.split('/').includes('..')) throw refuse(`the path ${JSON.stringify(candidate)}`);
  return candidate;
}

function skipMissing(entry: Entry, paths: string[]): string[] {
  if (entry.missing_path_behavior === 'skip') return paths.filter((candidate) => fs.existsSync(candidate));
  if (entry.missing_path_behavior !== undefined) throw refuse(`missing_path_behavior ${JSON.stringify(entry.missing_path_behavior)}`);
  return paths;
}

/**
 * What `sandbox` asks for, or undefined when it confines nothing (absent,
 * null, `permissions.type: "disabled"`, or `"external"` with the network
 * enabled: a sandbox around the server itself). `tmpdir` is the child's TMPDIR;
 * `findBwrap` finds the bwrap that will confine it, if there is one: called
 * only for a policy that restricts the file system (a lookup costs two
 * syscalls, and most calls carry no policy).
 */
export function confinementOf(
  sandbox: unknown,
  tmpdir: string | undefined,
  findBwrap: () => string | undefined = () => undefined,
): Confinement | undefined {
  if (sandbox === undefined || sandbox === null) return undefined;
  const { permissions, workspaceRoots } = checkSandboxShape(sandbox);
  if (permissions.type === 'disabled') return undefined;
  const network = networkOf(permissions.network);
  // The whole file system as it is, writable (`external`: the server's own sandbox, kept by whoever
  // started it): only a restricted network is left to cut, as the reference cuts it.
  if (permissions.type === 'external' || permissions.file_system!.type === 'unrestricted')
    return network === 'restricted' ? { ...UNRESTRICTED, noNetwork: true } : undefined;
  const fileSystem = permissions.file_system!;
  // The project roots are the workspace roots the policy names, and only those: without any, a
  // `project_roots` entry makes nothing writable (not even `cwd`), as in the reference.
  const roots = Array.isArray(workspaceRoots) ? workspaceRoots.map((root, i) => absolute(nativePath(root, `workspaceRoots[${i}]`))) : [];
  const confinement = { writable: [] as string[], readOnly: [] as string[], noNetwork: network === 'restricted' };
  let rootReadable = false;
  for (const entry of fileSystem.entries as Entry[]) {
    const paths = entryPaths(entry, roots, tmpdir);
    if (entry.access === 'write') confinement.writable.push(...paths);
    else if (entry.access === 'read') {
      if (entry.path?.value?.kind === 'root' && !entry.path.value.subpath) rootReadable = true;
      else confinement.readOnly.push(...paths);
    } else throw refuse(`access ${JSON.stringify(entry.access ?? null)}`);
  }
  if (!rootReadable) throw refuse('a file system without read access to the root');
  refuseWritableHostPrograms(confinement.writable, findBwrap());
  return { ...confinement, ...protectReadOnly(confinement.writable, confinement.readOnly, serverCode()) };
}
