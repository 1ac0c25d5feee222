/**
 * The `startup` workload: how long a fresh process takes, as multiples of a
 * bare `node -e 0` measured alternately in the same run (medians of each
 * round's ratio):
 * - spawning the server until it answers `initialize`;
 * - `import('exec-server')` in a fresh Node process;
 * - a fresh Node process that imports the package, spawns the server, runs
 *   `['true']` and closes;
 * and, in ms only, a fresh server's first command: from its `initialize`
 * answer to the `process/closed` of a `true` sent right after it (ours loads
 * the server in that time: the CLI answers `initialize` before, see
 * src/cli/main.ts).
 * With a peer command, also the peer's spawn → `initialize` answered and first command.
 * The first and third also as the floor does them (`startup-floor.mjs`: the
 * least a Node server and a Node parent can do), since two Node starts in a
 * row cannot take less than twice one.
 *
 * NODE_EXTRA_CA_CERTS makes every Node start read that bundle first, which
 * can cost more than the rest of a start and so flatters every ratio to
 * bare Node: when it is set, `bench.mjs` runs the workload with and without
 * it (the client defers it for the server it spawns, see
 * src/package/extra-ca-certs.ts).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { FLOOR_FLOW, FLOOR_SERVER } from './startup-floor.mjs';
import { median, ms } from './stats.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ENTRY = path.join(root, 'dist/index.js');

/** ms from spawn to the child's exit. */
function timeProcess(file, args, env) {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'inherit'], env });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(ms(process.hrtime.bigint() - started)) : reject(new Error(`${file} exited ${code}`))));
  });
}

/**
 * `command` as a program and its arguments (an array is taken as it is): split at spaces when it holds no
 * shell syntax, so that the time holds no shell's start (bare Node is
 * spawned directly too); otherwise through `sh -c`.
 */
function argvOf(command) {
  if (Array.isArray(command)) return command;
  return /["'`$\\|&;<>(){}*?~=]/.test(command) ? ['/bin/sh', '-c', `exec ${command}`] : command.trim().split(/\s+/);
}

const INITIALIZE = '{"id":1,"method":"initialize","params":{"clientName":"startup"}}\n';

/**
 * Spawns `command`, sends `initialize`, and once it is answered runs
 * `then(child, spawnedAt)`; resolves with what that resolves with, once the
 * server is killed (Codex's outlives SIGTERM and the end of its stdin for a while).
 */
function afterInitialize(command, env, then) {
  const [file, ...args] = argvOf(command);
  const spawnedAt = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'ignore'], env });
    child.on('error', reject);
    child.stdout.setEncoding('utf8');
    let seen = '';
    const onData = (text) => {
      seen += text;
      if (!seen.includes('"id":1')) return;
      child.stdout.off('data', onData);
      then(child, spawnedAt).then((value) => {
        child.on('exit', () => resolve(value));
        child.stdin.end();
        child.kill('SIGKILL');
      }, reject);
    };
    child.stdout.on('data', onData);
    child.stdin.write(INITIALIZE);
  });
}

const INITIALIZED = '{"method":"initialized","params":{}}\n';

/** ms from spawning `command` until its answer to `initialize`. */
const timeInitialize = (command, env) => afterInitialize(command, env, async (_, spawnedAt) => ms(process.hrtime.bigint() - spawnedAt));

const FIRST_START = {
  id: 2,
  method: 'process/start',
  params: { processId: 'first', argv: ['true'], cwd: pathToFileURL('/tmp').href, env: { PATH: '/usr/bin:/bin' }, tty: false },
};

/**
 * A fresh server's first command: ms from its `initialize` answer to
 * `process/closed` of a `true` started right after it, as a client that
 * spawns a server for one command sends it.
 */
const timeFirstRun = (command, env) =>
  afterInitialize(
    command,
    env,
    (child) =>
      new Promise((resolve) => {
        const answeredAt = process.hrtime.bigint();
        let seen = '';
        child.stdout.on('data', (text) => {
          seen += text;
          if (seen.includes('"process/closed"')) resolve(ms(process.hrtime.bigint() - answeredAt));
        });
        child.stdin.write(`${INITIALIZED}${JSON.stringify(FIRST_START)}\n`);
      }),
  );

/** How long a server sits after `initialize` before its idle size is read. */
const IDLE_MS = 1000;

/** A server's resident size (MiB) once it has answered `initialize` and sat idle. */
const idleRssMiB = (command, env) =>
  afterInitialize(command, env, async (child) => {
    child.stdin.write(INITIALIZED);
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024;
  });

/**
 * Idle resident sizes (MiB, medians): ours, a bare Node server that only
 * reads stdin and spawns (`floor`), and the peer's.
 */
export async function idleRss(ours, floor, peer, { rounds = 5, env = process.env } = {}) {
  const commands = { ours, floor, ...(peer ? { peer } : {}) };
  const samples = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, command] of Object.entries(commands)) samples[name].push(await idleRssMiB(command, env));
  }
  return Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]));
}

const IMPORT = `await import(${JSON.stringify(ENTRY)});`;
const RUN = `const { ExecServerClient } = await import(${JSON.stringify(ENTRY)});
const client = await ExecServerClient.spawn();
const result = await client.run(['true']);
await client.close();
if (result.exitCode !== 0) process.exit(1);`;

/** The workload's figures in `env` (default: this process's environment). */
export async function startup(ours, peer, { rounds = 21, env = process.env } = {}) {
  const contestants = {
    bareNode: () => timeProcess(process.execPath, ['-e', '0'], env),
    serverInitialize: () => timeInitialize(ours, env),
    firstRun: () => timeFirstRun(ours, env),
    importPackage: () => timeProcess(process.execPath, ['--input-type=module', '-e', IMPORT], env),
    importSpawnRunClose: () => timeProcess(process.execPath, ['--input-type=module', '-e', RUN], env),
    floorInitialize: () => timeInitialize([process.execPath, '-e', FLOOR_SERVER], env),
    floorFlow: () => timeProcess(process.execPath, ['-e', FLOOR_FLOW], env),
    ...(peer ? { peerInitialize: () => timeInitialize(peer, env), peerFirstRun: () => timeFirstRun(peer, env) } : {}),
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
    floorInitializeX: ratio('floorInitialize'),
    floorFlowX: ratio('floorFlow'),
  };
}

/** The settings to measure in: as this process's environment is, and without NODE_EXTRA_CA_CERTS if it is set. */
export function startupSettings() {
  if (!process.env.NODE_EXTRA_CA_CERTS) return [{ label: '', env: process.env }];
  const { NODE_EXTRA_CA_CERTS: _, ...without } = process.env;
  return [
    { label: ' with NODE_EXTRA_CA_CERTS, as set here', env: process.env },
    { label: ' without NODE_EXTRA_CA_CERTS', env: without },
  ];
}

/** One line of figures and ratios. */
export function formatStartup(label, times, withPeer, fmt) {
  return (
    `startup${label} (medians, ms; bare \`node -e 0\` ${fmt(times.bareNode)}): server spawn → initialize answered ${fmt(times.serverInitialize)} (${fmt(times.serverInitializeX, 2)}x)` +
    `${withPeer ? `, peer ${fmt(times.peerInitialize)}` : ''}; import('exec-server') ${fmt(times.importPackage)} (${fmt(times.importPackageX, 2)}x); ` +
    `import + spawn + run(['true']) + close ${fmt(times.importSpawnRunClose)} (${fmt(times.importSpawnRunCloseX, 2)}x); ` +
    `first command (initialize answered → closed of ['true'] sent right after) ${fmt(times.firstRun)}` +
    `${withPeer ? `, peer ${fmt(times.peerFirstRun)}` : ''}\n` +
    `startup floor${label} (scripts/bench/startup-floor.mjs, a bare CommonJS Node server and parent): spawn → initialize answered ` +
    `${fmt(times.floorInitialize)} (${fmt(times.floorInitializeX, 2)}x bare Node), spawn + run(['true']) + close ${fmt(times.floorFlow)} ` +
    `(${fmt(times.floorFlowX, 2)}x); ours over the floor: ${fmt(times.serverInitialize / times.floorInitialize, 2)}x, ` +
    `${fmt(times.importSpawnRunClose / times.floorFlow, 2)}x`
  );
}
