/**
 * The executors every shared suite runs against: local, remote through our
 * server behind `sh -c 'exec …'` (standing in for `ssh host exec-server`),
 * remote through our WebSocket listener, and the reference servers that are
 * present (see `REFERENCES`), over stdio and (Codex 0.169.0) over WebSocket.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createExecutor, LocalExecutor, type Executor } from '../../src/index.js';
import { codexBinary, isInstalled, VERSIONS } from '../../scripts/interop/install.mjs';
import { CLI } from './server-process.js';
import { listenCodex, listenOurs, type TokenListener } from './websocket-server.js';

export interface ExecutorKind {
  name: string;
  create: () => Promise<Executor>;
  /**
   * A reference server (Codex), without our extensions (*(ext)* in the
   * README's method table: `size`, `closeStdin`, signals other than `interrupt`, resize).
   */
  reference?: boolean;
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
  {
    name: 'remote over WebSocket (node dist/cli/main.js --listen ws://127.0.0.1:0, token)',
    create: async () => overWebSocket(await listenOurs()),
  },
];

/**
 * A remote executor connected to `listener` with its token, whose `close()`
 * also stops the listener (and waits for it to exit).
 */
async function overWebSocket(listener: TokenListener): Promise<Executor> {
  let executor: Executor;
  try {
    executor = await createExecutor({ url: listener.url, token: listener.token });
  } catch (error) {
    await listener.stop();
    throw error;
  }
  const close = executor.close.bind(executor);
  executor.close = async () => {
    try {
      await close();
    } finally {
      await listener.stop();
    }
  };
  return executor;
}

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

/** The Codex release whose exec-server has a WebSocket listener. */
export const WEBSOCKET_REFERENCE_VERSION = '0.169.0';
export const hasWebSocketReference = isInstalled(WEBSOCKET_REFERENCE_VERSION);
export const webSocketReferenceSkipReason = `Codex ${WEBSOCKET_REFERENCE_VERSION} is not installed (npm run interop installs it)`;

/** Codex 0.169.0's `exec-server --listen ws://127.0.0.1:0` with a token, when installed (else none). */
export function webSocketReferenceKinds(): ExecutorKind[] {
  if (!hasWebSocketReference) return [];
  return [
    {
      name: `remote over WebSocket (reference exec-server, codex ${WEBSOCKET_REFERENCE_VERSION}, token)`,
      create: async () => overWebSocket(await listenCodex(codexBinary(WEBSOCKET_REFERENCE_VERSION))),
      reference: true,
    },
  ];
}
