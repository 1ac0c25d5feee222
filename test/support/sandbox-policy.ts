/** Sandbox policies in the shape Codex 0.169 sends them (PROTOCOL-V2.md, appendix "sandboxed runs"). */
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';

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
