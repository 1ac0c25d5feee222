/**
 * A directory wider than the generation-2 reference answers at once (50,001
 * entries): `fs/readDirectory` refuses it in generation 2 and lists it in
 * generation 1, and `fs/walk` stops before its answer's estimated size
 * passes 4 MiB, as Codex 0.169 does (compared with it when it is installed).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Contestant, contestants } from './support/differential.js';
import { ServerProcess } from './support/server-process.js';

const COUNT = 50_001;
let root: string;
let wide: string;
let servers: Contestant[];

beforeAll(async () => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'fs-wide-')));
  wide = path.join(root, 'w');
  fs.mkdirSync(wide);
  for (let i = 0; i < COUNT; i++) fs.closeSync(fs.openSync(path.join(wide, `f${String(i).padStart(6, '0')}`), 'w'));
  servers = await contestants();
}, 60_000);
afterAll(async () => {
  await Promise.all(servers.map((contestant) => contestant.dispose()));
  fs.rmSync(root, { recursive: true, force: true });
});

describe('a directory of 50,001 entries', () => {
  it('is refused by fs/readDirectory in generation 2, as the reference refuses it', async () => {
    for (const { server } of servers) {
      expect(await server.error('fs/readDirectory', { path: pathToFileURL(wide).href })).toEqual({
        code: -32603,
        message: `fs/readDirectory returned ${COUNT} entries; limit is 50000`,
      });
    }
  });

  it('is listed whole by fs/readDirectory in generation 1, whose reference has no bound', async () => {
    const server = await ServerProcess.started();
    try {
      expect((await server.request('fs/readDirectory', { path: wide })).entries).toHaveLength(COUNT);
    } finally {
      await server.dispose();
    }
  });

  it('is walked until the answer would pass 4 MiB: each entry counts its URI and 64 bytes', async () => {
    const options = { maxDepth: 1, maxDirectories: 10, maxEntries: 50_000, followDirectorySymlinks: false };
    // Every entry's URI has the same length here: the walk lists the directory, then as many files as fit.
    const cost = (native: string) => pathToFileURL(native).href.length + 64;
    const budget = 4 * 1024 * 1024 - cost(wide);
    const fitting = Math.floor(budget / cost(path.join(wide, 'f000000')));
    for (const { name, server } of servers) {
      const result = await server.request('fs/walk', { path: pathToFileURL(root).href, options });
      expect(result.truncated, name).toBe(true);
      expect(result.entries.length, name).toBe(1 + fitting);
      expect(result.entries.at(-1).path, name).toBe(pathToFileURL(path.join(wide, `f${String(fitting - 1).padStart(6, '0')}`)).href);
    }
  }, 60_000);
});
