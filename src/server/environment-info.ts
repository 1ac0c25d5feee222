/** `environment/info` (EXT-ENVINFO): facts a client needs before it runs anything. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EnvironmentInfoResult } from '../protocol/types.js';

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

export function environmentInfo(): EnvironmentInfoResult {
  const shell = shellPath();
  return {
    shell: { name: path.basename(shell), path: shell },
    cwd: process.cwd(),
    platform: process.platform,
    arch: process.arch,
    homeDir: os.homedir(),
    pid: process.pid,
  };
}
