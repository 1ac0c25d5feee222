#!/usr/bin/env node
/**
 * Makes the Codex CLI releases the interop harness runs available, in a cache
 * directory outside the project (they are ~90-170 MB each and must not end up
 * in the repository or in node_modules):
 *
 *   ${EXEC_SERVER_INTEROP_CACHE:-~/.cache/exec-server-interop}/<version>/package/…/bin/codex
 *
 * A release is fetched only when its binary is missing, with the ordinary npm
 * client (`npm pack @openai/codex@<version>-linux-x64`) and extracted with tar.
 * `EXEC_SERVER_CODEX_0134` / `EXEC_SERVER_CODEX_0169` point at binaries
 * elsewhere and skip the download.
 *
 * Standalone: `node scripts/interop/install.mjs [version ...]`.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const VERSIONS = ['0.134.0', '0.169.0'];

// The npm package for linux-x64 ships a static musl build; no other platform is packaged the same way.
const TRIPLE = 'x86_64-unknown-linux-musl';

export function cacheRoot() {
  return process.env.EXEC_SERVER_INTEROP_CACHE || path.join(os.homedir(), '.cache', 'exec-server-interop');
}

/** `0.134.0` → `EXEC_SERVER_CODEX_0134`. */
export function binaryEnvVar(version) {
  const [major, minor] = version.split('.');
  return `EXEC_SERVER_CODEX_${major}${minor}`;
}

/** Where the binary of this version is (or would be once installed). */
export function codexBinary(version) {
  const override = process.env[binaryEnvVar(version)];
  if (override) return override;
  return path.join(cacheRoot(), version, 'package', 'vendor', TRIPLE, 'bin', 'codex');
}

export function isInstalled(version) {
  try {
    fs.accessSync(codexBinary(version), fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Installs one version if it is missing; returns the binary path. Throws with a readable message on failure. */
export function ensureCodex(version, { log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  if (isInstalled(version)) return codexBinary(version);
  const override = process.env[binaryEnvVar(version)];
  if (override) throw new Error(`${binaryEnvVar(version)}=${override} is not an executable file`);
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`Codex ${version}: only the linux-x64 package is supported (this is ${process.platform}-${process.arch})`);
  }
  const dir = path.join(cacheRoot(), version);
  fs.mkdirSync(dir, { recursive: true });
  const spec = `@openai/codex@${version}-linux-x64`;
  const tarball = path.join(dir, `openai-codex-${version}-linux-x64.tgz`);
  if (!fs.existsSync(tarball)) {
    log(`interop: fetching ${spec} into ${dir} …`);
    // --ignore-scripts: we only want the files; nothing in the package needs to run at install time.
    const printed = execFileSync('npm', ['pack', spec, '--pack-destination', dir, '--ignore-scripts', '--silent'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const name = printed.trim().split('\n').pop();
    if (name && path.join(dir, name) !== tarball) fs.renameSync(path.join(dir, name), tarball);
  }
  // Extract into a temporary sibling first, so an interrupted extraction never looks like an installed version.
  const staging = fs.mkdtempSync(path.join(dir, 'extract-'));
  try {
    execFileSync('tar', ['xzf', tarball, '-C', staging], { stdio: 'inherit' });
    fs.rmSync(path.join(dir, 'package'), { recursive: true, force: true });
    fs.renameSync(path.join(staging, 'package'), path.join(dir, 'package'));
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  if (!isInstalled(version)) throw new Error(`Codex ${version}: ${codexBinary(version)} missing after extracting ${tarball}`);
  log(`interop: Codex ${version} ready at ${codexBinary(version)}`);
  return codexBinary(version);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const wanted = process.argv.slice(2).length ? process.argv.slice(2) : VERSIONS;
  try {
    for (const version of wanted) console.log(`${version} ${ensureCodex(version)}`);
  } catch (error) {
    console.error(`interop: ${error.message}`);
    process.exit(1);
  }
}
