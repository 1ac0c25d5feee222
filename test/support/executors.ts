/**
 * The executors every shared suite runs against: local, remote through our
 * server behind `sh -c 'exec …'` (standing in for `ssh host exec-server`),
 * and the reference server when EXEC_SERVER_REFERENCE names its binary.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createExecutor, LocalExecutor, type Executor } from '../../src/index.js';
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
];

export const REFERENCE = process.env.EXEC_SERVER_REFERENCE;

export function referenceKind(): ExecutorKind | undefined {
  if (!REFERENCE) return undefined;
  return {
    name: 'remote (reference exec-server)',
    create: () => {
      const home = fs.mkdtempSync(path.join(os.tmpdir(), 'codex-home-'));
      return createExecutor({ command: REFERENCE, args: ['exec-server', '--listen', 'stdio'], env: { ...process.env, CODEX_HOME: home } });
    },
  };
}
