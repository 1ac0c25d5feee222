#!/usr/bin/env node
/**
 * The floor for the blocks benchmark: the least a Node stdio server can do
 * for `fs/open`, `fs/readBlock`, `fs/writeBlock` and `fs/close` (no
 * validation, synchronous file calls, one handle at a time). Run against it,
 * the bench driver measures its own limit: how fast blocks could move if the
 * server cost nothing. Not a server anyone should use.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const CHUNK_KEY = Buffer.from('"chunk":"');
const QUOTE = 0x22;
const NEWLINE = 0x0a;
const handles = new Map();
let parts = [];

const send = (text) => process.stdout.write(`${text}\n`);
const answer = (id, result) => send(JSON.stringify({ id, result }));

function readBlock(id, { handleId, offset, len }) {
  const block = Buffer.allocUnsafe(len);
  const read = fs.readSync(handles.get(handleId), block, 0, len, offset);
  process.stdout.write(`{"id":${JSON.stringify(id)},"result":{"chunk":"`);
  process.stdout.write(block.toString('base64', 0, read), 'latin1');
  send(`","eof":${read < len}}}`);
}

/** A line with a large `chunk`: the head is parsed, the chunk decoded straight from the bytes. */
function onLine(line) {
  const key = line.indexOf(CHUNK_KEY);
  if (key < 0) return onMessage(JSON.parse(line.toString()));
  const start = key + CHUNK_KEY.length;
  const end = line.indexOf(QUOTE, start);
  const message = JSON.parse(line.toString('utf8', 0, start) + line.toString('utf8', end));
  const bytes = Buffer.from(line.toString('latin1', start, end), 'base64');
  fs.writeSync(handles.get(message.params.handleId), bytes, 0, bytes.length, message.params.offset);
  answer(message.id, {});
}

function onMessage({ id, method, params }) {
  if (method === 'initialize') answer(id, { sessionId: 'block-floor' });
  else if (method === 'fs/open') {
    handles.set(params.handleId, fs.openSync(fileURLToPath(params.path), params.mode === 'read' ? 'r' : 'w'));
    answer(id, { handleId: params.handleId });
  } else if (method === 'fs/readBlock') readBlock(id, params);
  else if (method === 'fs/close') {
    fs.closeSync(handles.get(params.handleId));
    handles.delete(params.handleId);
    answer(id, {});
  } else if (id !== undefined) send(JSON.stringify({ id, error: { code: -32601, message: `not in the block floor server: ${method}` } }));
}

process.stdin.on('data', (bytes) => {
  let start = 0;
  for (let newline = bytes.indexOf(NEWLINE); newline !== -1; newline = bytes.indexOf(NEWLINE, start)) {
    parts.push(bytes.subarray(start, newline));
    const line = parts.length === 1 ? parts[0] : Buffer.concat(parts);
    if (line.length > 0) onLine(line);
    parts = [];
    start = newline + 1;
  }
  if (start < bytes.length) parts.push(bytes.subarray(start));
});
