/** FIFOs through the fs methods (generation 1 paths): refused at once, never waited on. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerProcess } from './support/server-process.js';

let dir: string;
let server: ServerProcess;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fs-fifo-'));
  server = await ServerProcess.started();
});
afterAll(async () => {
  await server.dispose();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('FIFOs never hold a request', () => {
  it('refuses to read or write a FIFO that has no other end, at once', async () => {
    const fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    // Four reads: as many as the threads of Node's pool, which a waiting open would each hold.
    for (let i = 0; i < 4; i++) {
      expect(await server.error('fs/readFile', { path: fifo })).toEqual({ code: -32600, message: `path \`${fifo}\` is not a file` });
    }
    expect(await server.error('fs/writeFile', { path: fifo, dataBase64: Buffer.from('x').toString('base64') })).toEqual({
      code: -32603,
      message: 'No such device or address (os error 6)',
    });
    // Answered at once: the server is not stuck behind them.
    expect((await server.request('fs/getMetadata', { path: fifo })).isFile).toBe(false);
  });

  it('refuses to copy onto a FIFO, and leaves FIFOs and sockets out of a directory copy, as the reference does', async () => {
    const fifo = path.join(dir, 'copy-target');
    execFileSync('mkfifo', [fifo]);
    fs.writeFileSync(path.join(dir, 'plain'), 'x');
    for (let i = 0; i < 4; i++) {
      expect(await server.error('fs/copy', { sourcePath: path.join(dir, 'plain'), destinationPath: fifo, recursive: false })).toEqual({
        code: -32600,
        message: `path \`${fifo}\` is not a file`,
      });
    }
    const tree = path.join(dir, 'tree');
    fs.mkdirSync(tree);
    fs.writeFileSync(path.join(tree, 'a'), 'a');
    execFileSync('mkfifo', [path.join(tree, 'pipe')]);
    fs.symlinkSync('a', path.join(tree, 'link'));
    expect(await server.request('fs/copy', { sourcePath: tree, destinationPath: path.join(dir, 'tree-copy'), recursive: true })).toEqual(
      {},
    );
    expect(fs.readdirSync(path.join(dir, 'tree-copy')).sort()).toEqual(['a', 'link']);
    // Answered at once: the pool's threads are free.
    expect((await server.request('fs/getMetadata', { path: dir })).isDirectory).toBe(true);
  });
});
