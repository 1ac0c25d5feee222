#!/usr/bin/env node
/**
 * `exec-server`: serves the protocol on stdin/stdout until stdin ends or a
 * signal arrives, then drains and exits 0 (EXT-DRAIN, EXT-SIGNALS).
 */
import { executorVersion } from '../server/environment-info.js';
import { ExecServer } from '../server/exec-server.js';
import { createStderrLogger } from '../server/logger.js';
import { serverExtensions } from '../server/extensions.js';
import { parseCli, USAGE, UsageError } from './args.js';
import { closeInheritedDescriptors } from './inherited-fds.js';

// stdout carries protocol messages only: a stray console.log must not corrupt it.
console.log = console.error;
console.info = console.error;

function main(): void {
  let options;
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
  const closed = closeInheritedDescriptors();
  if (closed.length > 0) logger.debug(`closed inherited descriptors ${closed.join(', ')}`);
  const extensions = serverExtensions();
  const server = new ExecServer({
    input: process.stdin,
    output: process.stdout,
    maxLineBytes: options.maxLineBytes,
    retentionMs: options.retentionMs,
    bwrap: options.bwrap,
    logger,
    extraMethods: extensions.methods,
    onShutdown: [extensions.shutdown],
  }).listen();
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.on(signal, () => server.handleSignal(signal));
  }
  process.stdout.on('error', () => undefined); // reported through the writer
  void server.done.then((code) => process.exit(code));
}

main();
