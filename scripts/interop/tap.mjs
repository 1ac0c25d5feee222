#!/usr/bin/env node
/**
 * An stdio tap, used as `program` in Codex's environments.toml: it starts the
 * real exec-server (ours or Codex's own), passes bytes through unchanged in
 * both directions, and appends every line to a log so that a failing scenario
 * can show the request and the answer that went wrong.
 *
 * Environment:
 *   TAP_TARGET_ARGV  JSON array: the server command, e.g. ["node","/…/dist/cli/main.js"]
 *   TAP_LOG          file to append to; lines are `C->S <json>`, `S->C <json>`,
 *                    `S!! <stderr line>` and `--- <event>`
 * Everything else in the environment is passed on to the server, which is how
 * a scenario gives the server a known variable.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';

// Base64 output chunks make lines of ~11 KB; the log only needs enough to recognise them.
const MAX_LOGGED_LINE = 4000;

const argv = JSON.parse(process.env.TAP_TARGET_ARGV ?? '[]');
const logFile = process.env.TAP_LOG;
if (!Array.isArray(argv) || argv.length === 0 || !logFile) {
  process.stderr.write('tap: TAP_TARGET_ARGV (JSON array) and TAP_LOG are required\n');
  process.exit(2);
}

// Synchronous appends: Codex kills the tap's process group when it is done, and buffered log lines would be lost.
function log(prefix, text) {
  const shown = text.length > MAX_LOGGED_LINE ? `${text.slice(0, MAX_LOGGED_LINE)}…[${text.length} chars]` : text;
  fs.appendFileSync(logFile, `${prefix} ${shown}\n`);
}

/** Calls `onLine` for every complete line of a byte stream (and the unterminated rest at the end). */
function splitLines(stream, onLine) {
  let pending = '';
  stream.on('data', (bytes) => {
    pending += bytes.toString('utf8');
    for (let newline = pending.indexOf('\n'); newline !== -1; newline = pending.indexOf('\n')) {
      onLine(pending.slice(0, newline));
      pending = pending.slice(newline + 1);
    }
  });
  stream.on('end', () => {
    if (pending) onLine(pending);
  });
}

// The tap's own variables are not the server's business.
const env = { ...process.env };
delete env.TAP_TARGET_ARGV;
delete env.TAP_LOG;

log('---', `start ${JSON.stringify(argv)}`);
const child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], env });

// Bytes are forwarded as they come (not re-framed), so the tap cannot change what either side sees.
process.stdin.on('data', (bytes) => child.stdin.write(bytes));
process.stdin.on('end', () => {
  log('C->S', '<EOF>');
  child.stdin.end();
});
child.stdin.on('error', (error) => log('---', `server stdin: ${error.message}`));
child.stdout.on('data', (bytes) => process.stdout.write(bytes));
child.stderr.on('data', (bytes) => process.stderr.write(bytes));

splitLines(process.stdin, (line) => log('C->S', line));
splitLines(child.stdout, (line) => log('S->C', line));
splitLines(child.stderr, (line) => log('S!!', line));

child.on('error', (error) => {
  log('---', `spawn failed: ${error.message}`);
  process.exit(127);
});
child.on('exit', (code, signal) => {
  log('---', `server exited code=${code} signal=${signal}`);
  // Let stdout drain before leaving, or the server's last answers would be cut off.
  process.stdout.end(() => process.exit(code ?? 1));
});

for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(signal, () => {
    log('---', `tap got ${signal}`);
    child.kill(signal);
  });
}
