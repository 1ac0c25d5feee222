/**
 * The `startup` workload: how long a fresh process takes, as multiples of a
 * bare `node -e 0` measured alternately in the same run (medians of each
 * round's ratio):
 * - spawning the server until it answers `initialize`;
 * - `import('exec-server')` in a fresh Node process;
 * - a fresh Node process that imports the package, spawns the server, runs
 *   `['true']` and closes.
 * With a peer command, also the peer's spawn → `initialize` answered.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, ms } from './stats.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ENTRY = path.join(root, 'dist/index.js');

/** ms from spawn to the child's exit. */
function timeProcess(file, args) {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(ms(process.hrtime.bigint() - started)) : reject(new Error(`${file} exited ${code}`))));
  });
}

/**
 * `command` as a program and its arguments: split at spaces when it holds no
 * shell syntax, so that the time holds no shell's start (bare Node is
 * spawned directly too); otherwise through `sh -c`.
 */
function argvOf(command) {
  return /["'`$\\|&;<>(){}*?~=]/.test(command) ? ['/bin/sh', '-c', `exec ${command}`] : command.trim().split(/\s+/);
}

/** ms from spawning `command` until its answer to `initialize` (then it is closed). */
function timeInitialize(command) {
  const [file, ...args] = argvOf(command);
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    let answered = false;
    child.on('error', reject);
    child.stdout.on('data', (bytes) => {
      if (answered || !bytes.includes('"id":1')) return;
      answered = true;
      const elapsed = ms(process.hrtime.bigint() - started);
      child.stdin.end();
      child.on('exit', () => resolve(elapsed));
    });
    child.stdin.write('{"id":1,"method":"initialize","params":{"clientName":"startup"}}\n');
  });
}

const IMPORT = `await import(${JSON.stringify(ENTRY)});`;
const RUN = `const { ExecServerClient } = await import(${JSON.stringify(ENTRY)});
const client = await ExecServerClient.spawn();
const result = await client.run(['true']);
await client.close();
if (result.exitCode !== 0) process.exit(1);`;

export async function startup(ours, peer, rounds = 21) {
  const contestants = {
    bareNode: () => timeProcess(process.execPath, ['-e', '0']),
    serverInitialize: () => timeInitialize(ours),
    importPackage: () => timeProcess(process.execPath, ['--input-type=module', '-e', IMPORT]),
    importSpawnRunClose: () => timeProcess(process.execPath, ['--input-type=module', '-e', RUN]),
    ...(peer ? { peerInitialize: () => timeInitialize(peer) } : {}),
  };
  const samples = Object.fromEntries(Object.keys(contestants).map((name) => [name, []]));
  for (const measure of Object.values(contestants)) await measure(); // warm the file cache
  for (let round = 0; round < rounds; round++) {
    for (const [name, measure] of Object.entries(contestants)) samples[name].push(await measure());
  }
  const medians = Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]));
  // The median of each round's ratio: bare Node ran just before in the same round, so a machine
  // whose speed drifts during the run moves both alike.
  const ratio = (name) => median(samples[name].map((value, round) => value / samples.bareNode[round]));
  return {
    ...medians,
    serverInitializeX: ratio('serverInitialize'),
    importPackageX: ratio('importPackage'),
    importSpawnRunCloseX: ratio('importSpawnRunClose'),
  };
}
