#!/usr/bin/env node
/**
 * The floor for the spawn and round-trip benchmarks: the least a Node stdio
 * exec-server can do for `process/start` on pipes (readline, JSON.parse,
 * child_process.spawn, exited/closed notifications) and for
 * `fs/getMetadata` (one asynchronous stat, as the servers do), with no
 * validation, bookkeeping or cleanup guarantees. Not a server anyone should
 * use; it answers nothing else.
 */
import { spawn } from 'node:child_process';
import { stat } from 'node:fs';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

function start(id, { processId, argv, cwd, env }) {
  const options = { cwd: cwd.startsWith('file:') ? fileURLToPath(cwd) : cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] };
  const child = spawn(argv[0], argv.slice(1), options);
  let seq = 0;
  let openPipes = 2;
  let exited = false;
  const closeIfDone = () => {
    if (exited && openPipes === 0) send({ method: 'process/closed', params: { processId, seq: ++seq } });
  };
  for (const pipe of [child.stdout, child.stderr]) {
    pipe.resume();
    pipe.on('close', () => {
      openPipes--;
      closeIfDone();
    });
  }
  child.on('exit', (code) => {
    exited = true;
    send({ method: 'process/exited', params: { processId, seq: ++seq, exitCode: code ?? -1 } });
    closeIfDone();
  });
  send({ id, result: { processId } });
}

function metadata(id, { path }) {
  stat(path.startsWith('file:') ? fileURLToPath(path) : path, (error, stats) =>
    send(
      error
        ? { id, error: { code: -32603, message: error.message } }
        : { id, result: { isDirectory: stats.isDirectory(), isFile: stats.isFile(), modifiedAtMs: Math.trunc(stats.mtimeMs) } },
    ),
  );
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const { id, method, params } = JSON.parse(line);
  if (method === 'initialize') send({ id, result: { sessionId: 'floor' } });
  else if (method === 'process/start') start(id, params);
  else if (method === 'fs/getMetadata') metadata(id, params);
  else if (id !== undefined) send({ id, error: { code: -32601, message: `not in the floor server: ${method}` } });
});
