/**
 * The build's facades for node builtins (scripts/bundle-facades.mjs): a
 * bundle built with them behaves as with the real modules, and a lazy
 * builtin is loaded by its first use, not before. Built with esbuild and run
 * in a fresh Node, as the shipped bundles are.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { facades } from '../scripts/bundle-facades.mjs';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-facades-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const ENTRY = `
import fs, { constants, existsSync } from 'node:fs';
import path from 'node:path';
import * as osNamespace from 'node:os';
import childProcess, { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
const loaded = (name) => process.moduleLoadList.includes('NativeModule ' + name);
const report = {};
report.beforeUse = { child_process: loaded('child_process'), crypto: loaded('crypto') };
report.eager = [existsSync('/'), constants.R_OK === fs.constants.R_OK, path.join('a', 'b'), typeof osNamespace.tmpdir()];
report.functionCall = execFileSync('echo', ['hi'], { encoding: 'utf8' });
report.afterUse = { child_process: loaded('child_process'), crypto: loaded('crypto') };
report.viaDefault = [typeof childProcess.spawn, typeof childProcess.ChildProcess, 'spawn' in childProcess, Object.keys(childProcess).includes('fork')];
report.bytes = randomBytes(4).length;
report.classThroughDefault = new net.Socket() instanceof net.Socket;
report.promises = typeof fs.promises.readFile;
console.log(JSON.stringify(report));
`;

describe('bundle facades', () => {
  it('keep a bundle working as with the real modules, and load lazy builtins on first use', async () => {
    fs.writeFileSync(path.join(dir, 'entry.mjs'), ENTRY);
    await build({
      entryPoints: [path.join(dir, 'entry.mjs')],
      outfile: path.join(dir, 'out.cjs'),
      bundle: true,
      platform: 'node',
      format: 'cjs',
      logLevel: 'silent',
      plugins: [facades({ eager: ['node:fs', 'node:path', 'node:os'], lazy: ['node:child_process', 'node:crypto', 'node:net'] })],
    });
    const report = JSON.parse(execFileSync(process.execPath, [path.join(dir, 'out.cjs')], { encoding: 'utf8' }));
    expect(report).toEqual({
      beforeUse: { child_process: false, crypto: false },
      eager: [true, true, path.join('a', 'b'), 'string'],
      functionCall: 'hi\n',
      afterUse: { child_process: true, crypto: false },
      viaDefault: ['function', 'function', true, true],
      bytes: 4,
      classThroughDefault: true,
      promises: 'function',
    });
  });
});
