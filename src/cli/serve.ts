/**
 * The server behind the CLI, loaded by `main.ts` once it has read the flags
 * and, over stdio, the first line (which it may have answered already: see
 * `server/early-initialize.ts`). Serves until stdin ends or a signal
 * arrives, then drains and exits 0 (EXT-DRAIN, EXT-SIGNALS; before the first
 * line, `main.ts` leaves signals to their default action).
 */
import { PassThrough, type Readable } from 'node:stream';
import type { AnsweredInitialize } from '../server/early-initialize.js';
import { ExecServer } from '../server/exec-server.js';
import type { ExtraCaCerts } from '../server/http/trusted-cas.js';
import { createStderrLogger, type Logger } from '../server/logger.js';
import { ProcessRuntime, type SpawnerMode } from '../server/process/runtime.js';
import type { BwrapLocator } from '../server/sandbox/bwrap-locator.js';
import type { CliOptions, WebSocketCli } from './args.js';
import { closeInheritedDescriptors } from './inherited-fds.js';
import type { FirstRead } from './first-exchange.js';

/** What `main.ts` hands on. */
export interface Handover {
  options: CliOptions;
  /** NODE_EXTRA_CA_CERTS's certificates, read at start when the client deferred them (see `package/extra-ca-certs.ts`). */
  extraCaCerts: ExtraCaCerts | undefined;
  /** The bwrap the first answer looked up, kept for the server's life. */
  bwraps: BwrapLocator;
  /** Over stdio: what was read of stdin, the first line included unless it was answered. */
  read?: FirstRead;
  /** The `initialize` answered before the server was loaded. */
  answered?: AnsweredInitialize;
  /** The end of that answer, which stdout did not take at once. */
  unwritten?: Buffer;
}

/** `EXEC_SERVER_SPAWNER=always|never` overrides the spawner choice (tests run both ways). */
function spawnerModeFromEnv(value: string | undefined): SpawnerMode {
  return value === 'always' || value === 'never' ? value : 'auto';
}

/** The server's flags that every connection takes. */
interface ServerFlags {
  maxLineBytes: number;
  answerBudgetBytes: number;
  retentionMs: number | undefined;
  bwrap: string | undefined;
  extraCaCerts: ExtraCaCerts | undefined;
}

/** How long a signalled listener may take to close its sessions, as a signalled stdio server may drain. */
const SIGNAL_CLOSE_MS = 5000;
const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** WebSocket mode: a session per connection until a signal; stdin is not read. */
async function serveWebSocket(options: WebSocketCli, server: ServerFlags, runtime: ProcessRuntime, logger: Logger): Promise<void> {
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
  // A launcher that closed its end gets no URL; the listener serves on all the same (no crash on EPIPE).
  process.stdout.on('error', (error) => process.stderr.write(`exec-server: cannot print the URL on stdout: ${error.message}\n`));
  process.stdout.write(`${listener.url}\n`);
  process.stderr.write(`exec-server: listening on ${listener.url}\n`);
  for (const warning of options.warnings) process.stderr.write(`exec-server: warning: ${warning}\n`);
  let signals = 0;
  const onSignal = () => {
    signals += 1;
    // A second signal, or a close that takes too long, ends at once: the guardian kills what is left.
    if (signals > 1) process.exit(0);
    setTimeout(() => process.exit(0), SIGNAL_CLOSE_MS).unref();
    // Closing every connection ends its session (its processes are killed); then exit.
    void listener.close().then(() => setTimeout(() => process.exit(0), 500));
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

/** stdin as the server reads it: what `main.ts` read goes first (all of the input, when it ended there). */
function stdinAfter(read: FirstRead | undefined): Readable {
  if (read?.ended) {
    const input = new PassThrough();
    input.end(read.bytes);
    return input;
  }
  if (read && read.bytes.length > 0) process.stdin.unshift(read.bytes);
  return process.stdin;
}

/** Serves over stdio, or a WebSocket listener; registers its signal handlers before it returns. */
export function serve(handover: Handover): void {
  const { options, answered } = handover;
  const logger = createStderrLogger(options.logLevel);
  const runtime = new ProcessRuntime({
    spawnerMode: spawnerModeFromEnv(process.env.EXEC_SERVER_SPAWNER),
    bwraps: handover.bwraps,
    // Before the first child: it must not inherit what the server's parent leaked to it. Only PTY
    // masters lack close-on-exec after that.
    inheritedDescriptorsClosed: true,
    beforeFirstSpawn: () => {
      const closed = closeInheritedDescriptors();
      if (closed.length > 0) logger.debug(`closed inherited descriptors ${closed.join(', ')}`);
    },
  });
  const flags: ServerFlags = {
    maxLineBytes: options.maxLineBytes,
    answerBudgetBytes: options.answerBudgetBytes,
    retentionMs: options.retentionMs,
    bwrap: options.bwrap,
    extraCaCerts: handover.extraCaCerts,
  };
  if (options.webSocket) {
    runtime.prepare();
    void serveWebSocket(options.webSocket, flags, runtime, logger);
    return;
  }
  process.stdout.on('error', () => undefined); // reported through the writer
  if (handover.unwritten && handover.unwritten.length > 0) process.stdout.write(handover.unwritten);
  // `initialize` is answered already: nothing waits for the runtime's start now, and the first command
  // (sent right after that answer) finds the guardian and the spawner starting on the other core.
  if (answered && !handover.unwritten?.length) runtime.prepare();
  const server = new ExecServer({
    input: stdinAfter(handover.read),
    output: process.stdout,
    ...flags,
    logger,
    runtime,
    // The runtime (guardian, spawner, first pipes) gets ready once the server has answered (after an
    // early-answered `initialize`, as `afterFirstAnswer` says), or at the first start.
    afterFirstAnswer: () => runtime.prepare(),
    answeredInitialize: answered,
  }).listen();
  for (const signal of SIGNALS) process.on(signal, () => server.handleSignal(signal));
  void server.done.then((code) => process.exit(code));
}
