/**
 * `environment/info` (EXT-ENVINFO in generation 1; a Codex method in
 * generation 2): facts a client needs before it runs anything. Generation 2
 * clients (Codex 0.169) decide from `capabilities` what they may send, so a
 * capability is true only when this server implements it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileUri } from '../protocol/path-uri.js';
import { packageVersion } from '../package/files.js';
import type { EnvironmentInfoResult } from '../protocol/types.js';
import type { Generation } from './client-generation.js';

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function shellPath(): string {
  const fromEnv = process.env.SHELL;
  if (fromEnv && path.isAbsolute(fromEnv) && isExecutable(fromEnv)) return fromEnv;
  try {
    const login = os.userInfo().shell;
    if (login && isExecutable(login)) return login;
  } catch {
    // no passwd entry for this uid
  }
  return '/bin/sh';
}

/**
 * The user's home as Codex reports it: `HOME` when absolute (normalized), the passwd entry's when
 * `HOME` is unset or empty, and none when `HOME` is relative (a path under our cwd would be a guess).
 */
function userHome(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const home = env.HOME;
  if (home) return path.isAbsolute(home) ? path.resolve(home) : undefined;
  try {
    const fromPasswd = os.userInfo().homedir;
    return path.isAbsolute(fromPasswd) ? path.resolve(fromPasswd) : undefined;
  } catch {
    return undefined; // no passwd entry for this uid
  }
}

/** Our package version. */
export const executorVersion = packageVersion;

/** Codex 0.169's capability flags: true only for what this server implements. */
const CAPABILITIES = {
  networkProxyLaunch: false,
  networkProxyReviewDomains: false,
  credentialMasking: false,
  credentialMaskingCustomProviders: false,
  capabilityDiscoverySandbox: false,
  fsWatchMissing: true,
  capabilityDiscoveryV2: false,
  environmentConfigRead: false,
  httpHeaderEnvVars: true,
  sandboxedFileStreaming: true,
  fileWriteStreaming: true,
  shellSnapshotV2: false,
  windowsMxc: false,
  linuxRootWritePreservesDevices: false,
  linuxApprovedRootWritePreservesRestrictions: false,
} as const;

/** Whether `process/start` can enforce a sandbox policy here (bwrap found), and how. */
export interface SandboxSupport {
  available: boolean;
  /** The `sandboxType` a confined start answers. */
  type: 'linuxSeccomp';
  /** Why not, when not. */
  reason?: string;
}

/** The answer: `cwd` is a `file://` URI for generation 2, a native path for generation 1. */
export function environmentInfo(generation: Generation, sandbox: SandboxSupport): EnvironmentInfoResult {
  const shell = shellPath();
  const cwd = process.cwd();
  const home = userHome();
  return {
    shell: { name: path.basename(shell), path: shell },
    cwd: generation === 2 ? pathToFileUri(cwd) : cwd,
    platform: process.platform,
    arch: process.arch,
    homeDir: home ?? os.homedir(),
    pid: process.pid,
    executorVersion: executorVersion(),
    ...(home === undefined ? {} : { userHomeDir: pathToFileUri(home) }),
    platformOs: process.platform,
    tempDir: pathToFileUri(os.tmpdir()),
    capabilities: { ...CAPABILITIES },
    sandbox,
  };
}
