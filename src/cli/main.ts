#!/usr/bin/env node
/**
 * `exec-server`: serves the protocol on stdin/stdout until stdin ends or a
 * signal arrives, then drains and exits 0 (EXT-DRAIN, EXT-SIGNALS).
 */
import { restoreExtraCaCerts } from '../package/extra-ca-certs.js';
import { executorVersion } from '../server/environment-info.js';
import { ExecServer } from '../server/exec-server.js';
import { type ExtraCaCerts, readExtraCaCerts } from '../server/http/trusted-cas.js';
import { createStderrLogger, type Logger } from '../server/logger.js';
import { ProcessRuntime, type SpawnerMode } from '../server/process/runtime.js';
import { parseCli, USAGE, UsageError, type WebSocketCli } from './args.js';
import { closeInheritedDescriptors } from './inherited-fds.js';

// stdout carries protocol messages only: a stray console.log must not corrupt it.
console.log = console.error;
console.info = console.error;

/** `EXEC_SERVER_SPAWNER=always|never` overrides the spawner choice (tests run both ways). */
function spawnerModeFromEnv(value: string | undefined): SpawnerMode {
  return value === 'always' || value === 'never' ? value : 'auto';
}

/** WebSocket mode: a session per connection until a signal; stdin is not read. */
async function serveWebSocket(
  options: WebSocketCli,
  server: {
    maxLineBytes: number;
    answerBudgetBytes: number;
    retentionMs: number | undefined;
    bwrap: string | undefined;
    extraCaCerts: ExtraCaCerts | undefined;
  },
  runtime: ProcessRuntime,
  logger: Logger,
): Promise<void> {
  // Loaded only in this mode: stdio servers, the common case, do not pay for ws and http at start.
  const { listenWebSocket } = await import('./websocket-listener.js');
  let listener: Awaited<ReturnType<typeof listenWebSocket>>;
  try {
    listener = await listenWebSocket({ ...options, maxFrameBytes: server.maxLineBytes, server, runtime, logger });
  } catch (error) {
    process.stderr.write(`exec-server: cannot listen on ws://${options.host}:${options.port}: ${(error as Error).message}\n`);
    process.exit(1);
  }
  // The URL alone on stdout, as Codex's listener prints it (a launcher reads it there); stdout carries nothing else here.
  process.stdout.write(`${listener.url}\n`);
  process.stderr.write(`exec-server: listening on ${listener.url}\n`);
  let signals = 0;
  const onSignal = () => {
    signals += 1;
    // A second signal, or a close that takes too long, ends at once: the guardian kills what is left.
    if (signals > 1) process.exit(0);
    setTimeout(() => process.exit(0), SIGNAL_CLOSE_MS).unref();
    // Closing every connection ends its session (its processes are killed); then exit.
    void listener.close().then(() => setTimeout(() => process.exit(0), 500));
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, onSignal);
}

/** How long a signalled listener may take to close its sessions, as a signalled stdio server may drain. */
const SIGNAL_CLOSE_MS = 5000;

function main(): void {
  // First: whatever reads the environment (children's, `valueEnvVar`) must see the variable back.
  const deferredCaFile = restoreExtraCaCerts(process.env);
  const extraCaCerts = deferredCaFile === undefined ? undefined : readExtraCaCerts(deferredCaFile);
  let options: ReturnType<typeof parseCli>;
  try {
    options = parseCli(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`exec-server: ${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (options.help) {
    process.stderr.write(USAGE);
    return;
  }
  if (options.version) {
    process.stderr.write(`exec-server ${executorVersion()}\n`);
    return;
  }
  const logger = createStderrLogger(options.logLevel);
  const runtime = new ProcessRuntime({
    spawnerMode: spawnerModeFromEnv(process.env.EXEC_SERVER_SPAWNER),
    // Before the first child: it must not inherit what the server's parent leaked to it. Only PTY
    // masters lack close-on-exec after that.
    inheritedDescriptorsClosed: true,
    beforeFirstSpawn: () => {
      const closed = closeInheritedDescriptors();
      if (closed.length > 0) logger.debug(`closed inherited descriptors ${closed.join(', ')}`);
    },
  });
  const serverOptions = {
    maxLineBytes: options.maxLineBytes,
    answerBudgetBytes: options.answerBudgetBytes,
    retentionMs: options.retentionMs,
    bwrap: options.bwrap,
    extraCaCerts,
  };
  if (options.webSocket) {
    runtime.prepare();
    void serveWebSocket(options.webSocket, serverOptions, runtime, logger);
    return;
  }
  // The runtime (guardian, spawner, first pipes) gets ready once `initialize` is answered, or at the first start.
  const afterFirstAnswer = () => runtime.prepare();
  const server = new ExecServer({
    input: process.stdin,
    output: process.stdout,
    ...serverOptions,
    logger,
    runtime,
    afterFirstAnswer,
  }).listen();
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.on(signal, () => server.handleSignal(signal));
  }
  process.stdout.on('error', () => undefined); // reported through the writer
  void server.done.then((code) => process.exit(code));
}

main();
