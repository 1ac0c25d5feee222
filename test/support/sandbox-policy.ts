/** Sandbox policies in the shape Codex 0.169 sends them (PROTOCOL-V2.md, appendix "sandboxed runs"). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { ServerProcess } from './server-process.js';

/** A file-system entry naming a special path (`root`, `project_roots`, …). */
export const special = (kind: string, access: string, extra: object = {}) => ({
  path: { type: 'special', value: { kind, ...extra } },
  access,
});

/** A managed policy with these entries, rooted at `workspace`. */
export function managedPolicy(workspace: string, entries: object[], network: unknown = 'restricted') {
  return {
    permissions: { type: 'managed', file_system: { type: 'restricted', entries }, network },
    cwd: pathToFileURL(workspace).href,
    workspaceRoots: [pathToFileURL(workspace).href],
    // Codex sends these too, and its own server requires windowsSandboxLevel.
    windowsSandboxLevel: 'disabled',
    windowsSandboxProxySettingsMode: 'reconcile',
    useLegacyLandlock: false,
  };
}

/** Codex 0.169's workspace-write policy for `workspace`. */
export function workspaceWrite(workspace: string, network = 'restricted') {
  return managedPolicy(
    workspace,
    [
      special('root', 'read'),
      special('project_roots', 'write'),
      special('slash_tmp', 'write'),
      special('tmpdir', 'write'),
      { ...special('project_roots', 'read', { subpath: '.git' }), missing_path_behavior: 'skip' },
      { ...special('project_roots', 'read', { subpath: '.codex' }), missing_path_behavior: 'skip' },
    ],
    network,
  );
}

/** `workspace`'s entries (sorted) once the stand-ins are gone: they are released just after the closed notification. */
export async function entriesOnceReleased(workspace: string, expected: string[]): Promise<string[]> {
  const deadline = Date.now() + 5000;
  while (JSON.stringify(fs.readdirSync(workspace).sort()) !== JSON.stringify(expected) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 10));
  return fs.readdirSync(workspace).sort();
}

/**
 * A test file's server and its fresh workspaces, in a directory under the
 * home directory (outside /tmp, which policies make writable): made before
 * the file's tests, disposed of and removed after them.
 */
export function sandboxFixture(name: string) {
  let base = '';
  let server: ServerProcess | undefined;
  let counter = 0;
  beforeAll(async () => {
    base = fs.mkdtempSync(path.join(os.homedir(), `.exec-server-${name}-`));
    server = await ServerProcess.started();
  });
  afterAll(async () => {
    await server?.dispose();
    fs.rmSync(base, { recursive: true, force: true });
  });
  return {
    get server(): ServerProcess {
      return server!;
    },
    get base(): string {
      return base;
    },
    /** A number not given before in this file (for process ids and workspace names). */
    next: () => ++counter,
    /** A new empty directory under the base. */
    freshWorkspace(): string {
      const workspace = path.join(base, `work${++counter}`);
      fs.mkdirSync(workspace);
      return workspace;
    },
  };
}
