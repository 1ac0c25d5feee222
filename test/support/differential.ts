/**
 * The same requests to our server and to Codex 0.169.0's exec-server (when
 * `npm run interop` has installed it): `servers()` gives ours and, if
 * present, the reference, both initialized; `normalize` replaces the
 * per-run parts of an answer (the scratch directory) so they compare equal.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { codexBinary, isInstalled } from '../../scripts/interop/install.mjs';
import { ServerProcess } from './server-process.js';

const REFERENCE_VERSION = '0.169.0';
/** The generation-1 reference (Codex 0.134.0), for native-path behaviour. */
export const GENERATION_1_REFERENCE = '0.134.0';
export const hasReference = isInstalled(REFERENCE_VERSION);
export const hasGeneration1Reference = isInstalled(GENERATION_1_REFERENCE);
export const referenceSkipReason = `Codex ${REFERENCE_VERSION} is not installed (npm run interop installs it)`;

export interface Contestant {
  name: 'ours' | 'reference';
  server: ServerProcess;
  dispose(): Promise<void>;
}

/** Our server, and the reference when it is installed; CODEX_HOME stays outside /tmp, as Codex wants. */
export async function contestants(env: NodeJS.ProcessEnv = process.env, version = REFERENCE_VERSION): Promise<Contestant[]> {
  const ours = await ServerProcess.started([], env);
  const list: Contestant[] = [{ name: 'ours', server: ours, dispose: () => ours.dispose() }];
  if (isInstalled(version)) {
    const home = fs.mkdtempSync(path.join(os.homedir(), '.exec-server-diff-home-'));
    const program: [string, string[]] = [codexBinary(version), ['exec-server', '--listen', 'stdio']];
    const reference = await ServerProcess.started([], { ...env, CODEX_HOME: home }, undefined, program);
    list.push({
      name: 'reference',
      server: reference,
      dispose: async () => {
        await reference.dispose();
        fs.rmSync(home, { recursive: true, force: true });
      },
    });
  }
  return list;
}

/** An answer with `root` (a scratch directory, as a path and as a URI) replaced by `R`. */
export function normalize(value: unknown, root: string): unknown {
  const text = JSON.stringify(value ?? null);
  const uriRoot = `file://${root}`;
  return JSON.parse(text.split(uriRoot).join('file://R').split(root).join('R'));
}
