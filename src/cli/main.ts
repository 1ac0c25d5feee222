#!/usr/bin/env node
/**
 * `exec-server`: serves the protocol on stdin/stdout until stdin ends or a
 * signal arrives, then drains and exits 0 (EXT-DRAIN, EXT-SIGNALS; a signal
 * before the first line of input ends it by the signal's default action).
 *
 * This part runs first and is kept small: it reads the flags and, over
 * stdio, the first line, answers an `initialize` there itself
 * (`server/early-initialize.ts`), and only then loads the server
 * (`serve.ts`), handing on what it read.
 */
import { restoreExtraCaCerts } from '../package/extra-ca-certs.js';
import { answerInitialize } from '../server/early-initialize.js';
import { executorVersion } from '../server/environment-info.js';
import { readExtraCaCerts } from '../server/http/trusted-cas.js';
import { createStderrLogger } from '../server/logger.js';
import { sandboxSupport } from '../server/sandbox/bwrap.js';
import { BwrapLocator } from '../server/sandbox/bwrap-locator.js';
import { type CliOptions, parseCli, USAGE, UsageError } from './args.js';
import { type FirstRead, readFirstLine, writeNow } from './first-exchange.js';
import type { Handover } from './serve.js';

// stdout carries protocol messages only: a stray console.log must not corrupt it.
console.log = console.error;
console.info = console.error;

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
/** Logged at debug level when the first line was answered here. */
const ANSWERED_EARLY = 'initialize answered before the server was loaded';

/** The flags, or undefined when they asked for help or a version (already printed); exits 2 on a usage error. */
function flags(): CliOptions | undefined {
  let options: CliOptions;
  try {
    options = parseCli(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`exec-server: ${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  // On stdout, where scripts look for them: the server is not serving here.
  if (options.help) process.stdout.write(USAGE);
  else if (options.version) process.stdout.write(`exec-server ${executorVersion()}\n`);
  else return options;
  return undefined;
}

/** Answers `read`'s first line if it is a plain `initialize`; what the server must still read, write and take over. */
function answerFirstLine(
  read: FirstRead,
  bwraps: Handover['bwraps'],
  bwrap: string | undefined,
): Pick<Handover, 'read' | 'answered' | 'unwritten'> {
  const early = read.line && answerInitialize(read.line, () => sandboxSupport(bwraps.find(bwrap), bwrap));
  if (!read.line || !early) return { read };
  const answer = Buffer.from(early.answer);
  const unwritten = writeNow(1, answer);
  // Nothing written: the server answers the line itself (and finds stdout full or broken).
  if (unwritten.length === answer.length) return { read };
  return { read: { ...read, bytes: read.bytes.subarray(read.line.length + 1) }, answered: early.answered, unwritten };
}

async function main(): Promise<void> {
  // First: whatever reads the environment (children's, `valueEnvVar`) must see the variable back.
  const deferredCaFile = restoreExtraCaCerts(process.env);
  // Read now, as Node reads it at start: a file removed later changes nothing.
  const extraCaCerts = deferredCaFile === undefined ? undefined : readExtraCaCerts(deferredCaFile);
  const options = flags();
  if (!options) return;
  const bwraps = new BwrapLocator();
  if (options.webSocket) {
    (await import('./serve.js')).serve({ options, extraCaCerts, bwraps });
    return;
  }
  // A signal before the first line ends the process by its default action: a handler could not
  // end it while the read is pending (see `first-exchange.ts`), and there is nothing to drain yet.
  const read = await readFirstLine(0);
  // From here a signal is caught, and reaches the server's handlers once they are set.
  const keep = () => undefined;
  for (const signal of SIGNALS) process.on(signal, keep);
  const first = answerFirstLine(read, bwraps, options.bwrap);
  if (first.answered) createStderrLogger(options.logLevel).debug(ANSWERED_EARLY);
  (await import('./serve.js')).serve({ options, extraCaCerts, bwraps, ...first });
  for (const signal of SIGNALS) process.off(signal, keep);
}

void main();
