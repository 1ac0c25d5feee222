#!/usr/bin/env node
// Adds to package-lock.json the other platforms' optional binaries (Biome, oxc-parser, esbuild) that the
// registry mirror of the build machines does not serve, so `npm ci` validates everywhere. The
// entries carry version, os, cpu and libc (read from the package names); npm skips them on
// other platforms without fetching them. Run after `npm install` changes the lock.
import fs from 'node:fs';

const lockFile = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(fs.readFileSync(lockFile, 'utf8'));
const packages = lock.packages;
const CPUS = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 'riscv64', 's390x', 'loong64', 'mips64el', 'wasm32'];
const OSES = {
  darwin: 'darwin',
  linux: 'linux',
  win32: 'win32',
  android: 'android',
  freebsd: 'freebsd',
  openharmony: 'openharmony',
  netbsd: 'netbsd',
  openbsd: 'openbsd',
  sunos: 'sunos',
  aix: 'aix',
};

/** `@biomejs/cli-linux-x64-musl` → { os: linux, cpu: x64, libc: musl }. */
function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((part) => OSES[part]);
  const cpu = parts.find((part) => CPUS.includes(part)) ?? (parts.includes('arm') ? 'arm' : undefined);
  const libc =
    parts.includes('musl') || parts.includes('musleabihf')
      ? 'musl'
      : parts.includes('gnu') || parts.includes('gnueabihf')
        ? 'glibc'
        : undefined;
  return os && cpu ? { os, cpu, libc } : undefined;
}

let added = 0;
for (const entry of Object.values(packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    const platform = platformOf(name);
    if (packages[key] || !platform) continue;
    const version = range.replace(/^[\^~=]/, '');
    packages[key] = {
      version,
      os: [platform.os],
      cpu: [platform.cpu],
      ...(platform.libc && platform.os === 'linux' ? { libc: [platform.libc] } : {}),
      optional: true,
    };
    added++;
  }
}
const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
lock.packages = sorted;
fs.writeFileSync(lockFile, `${JSON.stringify(lock, null, 2)}\n`);
process.stderr.write(`added ${added} platform entries\n`);
