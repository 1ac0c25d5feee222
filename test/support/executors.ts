/**
 * The executors every shared suite runs against: local, remote through our
 * server behind `sh -c 'exec …'` (standing in for `ssh host exec-server`),
 * and the reference servers that are present (see `REFERENCES`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createExecutor, LocalExecutor, type Executor } from '../../src/index.js';
import { codexBinary, isInstalled, VERSIONS } from '../../scripts/interop/install.mjs';
import { CLI } from './server-process.js';

export interface ExecutorKind {
  name: string;
  create: () => Promise<Executor>;
}

export const executorKinds: ExecutorKind[] = [
  { name: 'local', create: async () => new LocalExecutor() },
  {
    name: 'remote (sh -c exec node dist/cli/main.js)',
    create: () => createExecutor({ command: 'sh', args: ['-c', `exec ${process.execPath} ${CLI}`] }),
  },
  {
    name: 'remote, generation 1 (protocolGeneration: 1)',
    create: () => createExecutor({ command: process.execPath, args: [CLI], protocolGeneration: 1 }),
  },
];

/** A reference server binary, by the name the tests show. */
export interface Reference {
  name: string;
  binary: string;
}

/**
 * The reference servers present: `EXEC_SERVER_REFERENCE` if set, and each
 * Codex release `npm run interop` installed (0.134.0 speaks generation 1,
 * 0.169.0 generation 2).
 */
export const REFERENCES: Reference[] = [
  ...(process.env.EXEC_SERVER_REFERENCE ? [{ name: 'EXEC_SERVER_REFERENCE', binary: process.env.EXEC_SERVER_REFERENCE }] : []),
  ...VERSIONS.filter((version) => isInstalled(version)).map((version) => ({ name: `codex ${version}`, binary: codexBinary(version) })),
];

export function referenceKinds(): ExecutorKind[] {
  return REFERENCES.map(({ name, binary }) => ({
    name: `remote (reference exec-server, ${name})`,
    create: () => {
      const home = fs.mkdtempSync(path.join(os.tmpdir(), 'codex-home-'));
      return createExecutor({ command: binary, args: ['exec-server', '--listen', 'stdio'], env: { ...process.env, CODEX_HOME: home } });
    },
  }));
}
