/**
 * How the bench driver reaches a server (`--transport`):
 * - `stdio`: the command's stdin and stdout carry newline-delimited messages;
 * - `ws`: the command is started with `--listen ws://127.0.0.1:0`, the URL it
 *   prints is connected to with the `ws` package, and each message is one
 *   text frame both ways.
 *
 * `connect(transport, command, sink, env)` resolves to
 * `{ child, send(parts), close() }`, `parts` being the pieces of one message (texts or bytes). What arrives goes to the sink: over stdio
 * as a byte stream (`sink.onData(bytes)`: the driver splits the lines itself,
 * fragment by fragment, so that output lines are never joined), over ws as
 * whole messages (`sink.onLine(bytes)`, the frame is already the line).
 */
import { spawn } from 'node:child_process';
import WebSocket from 'ws';

export const TRANSPORTS = ['stdio', 'ws'];

/** How long a server may take to print the URL it listens on, and to exit when asked. */
const START_TIMEOUT_MS = 15_000;
const EXIT_TIMEOUT_MS = 10_000;

/**
 * A listening server does not exit when the bench does (it has no stdin to
 * close; nor does a stdio command that listens by default, e.g.
 * `codex exec-server` without `--listen stdio`), so servers still running when
 * this process exits (an uncaught error) are killed here, not left behind.
 */
const running = new Set();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Spawns `sh -c "exec command"` (so the child is the server itself), tracked until it exits. */
function startServer(command, stdio, env) {
  const child = spawn('/bin/sh', ['-c', `exec ${command}`], { stdio, env });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  running.add(child);
  exited.then(() => running.delete(child));
  return { child, exited };
}

export function connect(transport, command, sink, env = process.env) {
  if (transport === 'stdio') return stdio(command, sink, env);
  if (transport === 'ws') return webSocket(command, sink, env);
  throw new Error(`unknown transport ${transport} (${TRANSPORTS.join(' | ')})`);
}

/** Resolves once the child has exited; SIGKILL if it has not within EXIT_TIMEOUT_MS. */
async function exitWithin(child, exited) {
  const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

function stdio(command, sink, env) {
  const { child, exited } = startServer(command, ['pipe', 'pipe', 'inherit'], env);
  child.stdout.on('data', (bytes) => sink.onData(bytes));
  // Writing to a server that exited fails (EPIPE): its requests are answered with an error (driver.mjs).
  child.stdin.on('error', () => undefined);
  return {
    child,
    // The parts of one message (texts, or a large payload's bytes).
    send: (parts) => {
      child.stdin.cork();
      for (const part of parts) child.stdin.write(part);
      child.stdin.write('\n');
      child.stdin.uncork();
    },
    // The server ends its session, and exits, when its stdin closes.
    close: async () => {
      child.stdin.end();
      await exitWithin(child, exited);
    },
  };
}

/**
 * The command as a WebSocket listener on a free loopback port. A `--listen`
 * already in it (`codex exec-server --listen stdio`) is replaced, so one
 * `--peer` command serves both transports.
 */
export function listeningCommand(command) {
  return `${command.replace(/\s--listen(=|\s+)\S+/, '')} --listen ws://127.0.0.1:0`;
}

async function webSocket(command, sink, env) {
  const { child, exited } = startServer(listeningCommand(command), ['ignore', 'pipe', 'pipe'], env);
  let socket;
  try {
    socket = await open(await boundUrl(child, exited));
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  }
  socket.on('message', (bytes) => sink.onLine(bytes));
  socket.on('error', (error) => process.stderr.write(`bench: ${command}: ${error.message}\n`));
  return {
    child,
    send: (parts) => socket.send(parts.length === 1 ? parts[0] : Buffer.concat(parts.map((part) => Buffer.from(part)))),
    // A listener outlives its connections: closing the socket ends the session; SIGTERM ends the server.
    close: async () => {
      socket.close();
      child.kill('SIGTERM');
      await exitWithin(child, exited);
    },
  };
}

/**
 * The `ws://IP:PORT` the server prints once bound (ours on stderr, Codex's on
 * stdout). What it prints before is its announcement and is swallowed; what
 * it prints after goes on to our stderr, as over stdio.
 */
function boundUrl(child, exited) {
  return new Promise((resolve, reject) => {
    let printed = '';
    const timer = setTimeout(() => fail(`printed no ws:// URL within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    const fail = (why) => {
      clearTimeout(timer);
      reject(new Error(`the server ${why}: ${printed.trim()}`));
    };
    const look = (bytes) => {
      printed += bytes;
      // Port 0 is the one asked for (a command may echo its arguments), not the one bound.
      const url = /ws:\/\/[^\s/]+:[1-9]\d*/.exec(printed)?.[0];
      if (!url) return;
      clearTimeout(timer);
      for (const stream of [child.stdout, child.stderr]) stream.removeListener('data', look);
      child.stdout.resume(); // drained, so that a chatty server never blocks on a full pipe
      child.stderr.pipe(process.stderr);
      resolve(url);
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    exited.then((code) => fail(`exited (${code}) before listening`));
  });
}

/** Compression off (permessage-deflate), so that the figures are the server's and not zlib's. */
function open(url) {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { perMessageDeflate: false });
    socket.once('open', () => {
      socket.removeListener('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}
