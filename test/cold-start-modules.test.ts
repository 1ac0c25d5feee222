/**
 * What a fresh server loads for the commonest session: initialize, then one
 * pipe command. Every builtin or package loaded on that path is paid for by
 * every parent that spawns a server per task (`npm run bench -- --only
 * startup` shows the cost); those below are for other paths (WebSocket,
 * HTTP, PTYs, hashing) and must wait for them.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI } from './support/server-process.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cold-start-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Preloaded into the server: at exit, the builtins and packages it loaded, on stderr. */
const PRELOAD = `
process.on('exit', () => {
  const builtins = process.moduleLoadList.filter((m) => /^NativeModule [^/]+$/.test(m) || /^NativeModule fs\\/promises$/.test(m)).map((m) => m.slice(13));
  const packages = Object.keys(require.cache).filter((file) => file.includes('node_modules'));
  process.stderr.write('LOADED ' + JSON.stringify({ builtins, packages }) + '\\n');
});
`;

const LINES = [
  { id: 1, method: 'initialize', params: { clientName: 'cold-start' } },
  { method: 'initialized', params: {} },
  { id: 2, method: 'process/start', params: { processId: 'p', argv: ['true'], cwd: 'file:///tmp', env: {}, tty: false } },
];

/** Runs the session to `process/closed`, ends stdin, and returns what the server had loaded by its exit. */
async function loadedBySession(): Promise<{ builtins: string[]; packages: string[]; stdout: string }> {
  const preload = path.join(dir, 'preload.cjs');
  fs.writeFileSync(preload, PRELOAD);
  const child = spawn(process.execPath, ['--require', preload, CLI], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await new Promise<void>((resolve) => {
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      if (stdout.includes('"process/closed"')) resolve();
    });
    child.on('exit', () => resolve());
    child.stdin.write(LINES.map((line) => `${JSON.stringify(line)}\n`).join(''));
  });
  child.stdin.end();
  await exited;
  const report = /^LOADED (.*)$/m.exec(stderr);
  if (!report) throw new Error(`no report from the server; stderr: ${stderr}`);
  return { ...JSON.parse(report[1]!), stdout };
}

describe('a fresh server, for initialize and one pipe command', () => {
  it('loads no builtin or package that only other paths need', async () => {
    const { builtins, packages, stdout } = await loadedBySession();
    expect(stdout).toContain('"process/closed"');
    expect(builtins).toContain('child_process'); // the report works: the command was spawned
    for (const unneeded of ['crypto', 'tty', 'http', 'https', 'zlib', 'fs/promises', 'worker_threads', 'inspector']) {
      expect(builtins, unneeded).not.toContain(unneeded);
    }
    expect(packages).toEqual([]); // undici, ws, node-pty: on first use
  });
});
