#!/usr/bin/env node
/**
 * The floor for the spawn and round-trip benchmarks: the least a Node stdio
 * exec-server can do for `process/start` on pipes (readline, JSON.parse,
 * child_process.spawn, exited/closed notifications) and for
 * `fs/getMetadata` (one asynchronous stat, as the servers do), and for the
 * block methods (`fs/open`, `fs/readBlock`, `fs/writeBlock`, `fs/close`: one
 * positional read or write per block, base64 written in slices as ours does,
 * the fastest way we found for Node), with no validation, bookkeeping or
 * cleanup guarantees. Not a server anyone should use; it answers nothing else.
 */
import { spawn } from 'node:child_process';
import { close, open, read, stat, write } from 'node:fs';
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

const handles = new Map();
/** Base64 slices of 48 KiB: each a short-lived string, written as latin1 (see src/transport/line-writer.ts). */
const SLICE_BYTES = 48 * 1024;
const pathOf = (uri) => (uri.startsWith('file:') ? fileURLToPath(uri) : uri);
/** Answers of the block methods leave one at a time: a line must not start inside a streaming one. */
let answering = Promise.resolve();
const answer = (message) => (answering = answering.then(() => send(message)));
const failed = (id, error) => answer({ id, error: { code: -32603, message: error.message } });

function openFile(id, { handleId, path, mode }) {
  open(pathOf(path), mode === 'read' ? 'r' : 'w', (error, fd) => {
    if (error) return failed(id, error);
    handles.set(handleId, fd);
    answer({ id, result: { handleId } });
  });
}

/** Read buffers, reused: a fresh 1 MiB buffer per block costs page faults on every block. */
const spare = [];
/** Each slice goes once the last one drained: no megabytes queued in memory. */
async function writeAnswer(id, bytes, filled, eof) {
  const out = process.stdout;
  out.write(`{"id":${id},"result":{"chunk":"`);
  for (let at = 0; at < filled; at += SLICE_BYTES) {
    const slice = bytes.subarray(at, Math.min(at + SLICE_BYTES, filled)).toString('base64');
    if (!out.write(slice, 'latin1')) await new Promise((resolve) => out.once('drain', resolve));
  }
  out.write(`","eof":${eof}}}\n`);
  spare.push(bytes);
}

function readBlock(id, { handleId, offset, len }) {
  const bytes = spare.pop() ?? Buffer.allocUnsafe(len);
  read(handles.get(handleId), bytes, 0, len, offset, (error, filled) => {
    if (error) failed(id, error);
    else answering = answering.then(() => writeAnswer(id, bytes, filled, filled < len));
  });
}

function writeBlock(id, { handleId, offset, chunk }) {
  const bytes = Buffer.from(chunk, 'base64');
  write(handles.get(handleId), bytes, 0, bytes.length, offset, (error) => (error ? failed(id, error) : answer({ id, result: {} })));
}

function closeFile(id, { handleId }) {
  close(handles.get(handleId), () => answer({ id, result: {} }));
  handles.delete(handleId);
}

const BLOCK_METHODS = { 'fs/open': openFile, 'fs/readBlock': readBlock, 'fs/writeBlock': writeBlock, 'fs/close': closeFile };

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const { id, method, params } = JSON.parse(line);
  if (method === 'initialize') send({ id, result: { sessionId: 'floor' } });
  else if (method === 'process/start') start(id, params);
  else if (method === 'fs/getMetadata') metadata(id, params);
  else if (BLOCK_METHODS[method]) BLOCK_METHODS[method](id, params);
  else if (id !== undefined) send({ id, error: { code: -32601, message: `not in the floor server: ${method}` } });
});
