#!/usr/bin/env node
/**
 * `npm run soak [-- --peer "<command>"] [--quick] [--processes N] [--fs N]`:
 * drives one exec-server (and optionally another) through many process
 * lifecycles and fs calls, checks every notification, and reports leaks (fds,
 * RSS, zombies, leftover children). Exits 1 if a must-hold figure fails.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Driver } from './bench/driver.mjs';
import { fdCount, leftovers, rssKiB, zombies } from './soak/proc.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    peer: { type: 'string' },
    quick: { type: 'boolean', default: false },
    processes: { type: 'string' },
    fs: { type: 'string' },
  },
});
const PROCESSES = Number(values.processes ?? (values.quick ? 500 : 20_000));
const FS_CALLS = Number(values.fs ?? (values.quick ? 500 : 20_000));
const CONCURRENCY = 16;
const PTY_EVERY = 5; // 1 process in 5 runs on a PTY
const RETENTION_MS = 1000; // ours is started with this, so retained output expires during the soak
const SETTLE_MS = RETENTION_MS + 2000;
const CLOSE_TIMEOUT_MS = 30_000; // a process whose `closed` has not come by then counts as lost
const TIME_LIMIT_MS = 10 * 60_000; // per server soaked
const FS_FILES = 64;
const ENV = { PATH: '/usr/bin:/bin' };
const OURS = `${process.execPath} ${path.join(root, 'dist/cli/main.js')} --retention-ms ${RETENTION_MS}`;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const b64 = (text) => Buffer.from(text).toString('base64');

/** Resolves to `fallback` if `promise` has not settled within `ms` (and leaves no timer behind). */
function withTimeout(promise, ms, fallback) {
  let timer;
  const expiry = new Promise((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  return Promise.race([promise, expiry]).finally(() => clearTimeout(timer));
}

/** Runs worker(0..total-1) with at most `concurrency` in flight. */
async function pool(total, concurrency, worker) {
  let next = 0;
  const lane = async () => {
    while (next < total) await worker(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, lane));
}

// ---- process lifecycles ---------------------------------------------------

/** Checks every process notification as it arrives; keeps only what verification needs. */
class Tracker {
  constructor(driver) {
    this.processes = new Map();
    this.errors = 0;
    this.firstErrors = [];
    this.lost = 0;
    driver.listeners.add((message) => this.onMessage(message));
  }

  error(text) {
    this.errors++;
    if (this.firstErrors.length < 5) this.firstErrors.push(text);
  }

  expect(id, tty) {
    const entry = { id, tty, lastSeq: 0, exits: 0, closes: 0, output: { stdout: [], stderr: [], pty: [] } };
    entry.closed = new Promise((resolve) => (entry.onClosed = resolve));
    this.processes.set(id, entry);
    return entry;
  }

  onMessage({ method, params }) {
    if (!['process/output', 'process/exited', 'process/closed'].includes(method)) return;
    const entry = this.processes.get(params?.processId);
    if (entry === undefined) return this.error(`${method} for unknown process ${params?.processId}`);
    if (entry.done || entry.closes > 0) return this.error(`${entry.id}: ${method} after closed`);
    // The seq counter is shared by output, exited and closed: each must be the previous + 1.
    if (params.seq !== entry.lastSeq + 1) this.error(`${entry.id}: seq ${params.seq} after ${entry.lastSeq}`);
    entry.lastSeq = Math.max(entry.lastSeq, params.seq);
    if (method === 'process/output') this.onOutput(entry, params);
    else if (method === 'process/exited') {
      if (++entry.exits > 1) this.error(`${entry.id}: second exited`);
      if (params.exitCode !== 0) this.error(`${entry.id}: exit code ${params.exitCode}`);
    } else {
      entry.closes++;
      if (entry.exits === 0) this.error(`${entry.id}: closed before exited`);
      entry.onClosed(true);
    }
  }

  onOutput(entry, { stream, chunk }) {
    const allowed = entry.tty ? stream === 'pty' : stream === 'stdout' || stream === 'stderr';
    if (!allowed) this.error(`${entry.id}: output on stream ${stream} (tty ${entry.tty})`);
    (entry.output[stream] ?? entry.output.pty).push(Buffer.from(chunk, 'base64'));
  }

  /** Lost = the expected bytes, the exit or the close did not all arrive. */
  settle(entry, expected, closed) {
    const got = (stream) => Buffer.concat(entry.output[stream]).toString('latin1');
    const bytesOk = Object.entries(expected).every(([stream, text]) => got(stream) === text);
    if (!closed || entry.exits !== 1 || !bytesOk) this.lost++;
    entry.done = true;
    entry.output = undefined; // free the bytes; the entry stays to catch late notifications
  }
}

/** One lifecycle: start, then wait for `closed` and compare the bytes. */
async function runProcess(driver, tracker, index, marker) {
  const id = `p${index}`;
  const tty = index % PTY_EVERY === 0;
  const entry = tracker.expect(id, tty);
  // The marker is $0 of the shell, so a surviving child can be found in /proc/*/cmdline.
  const argv = ['/bin/sh', '-c', `echo out-${index}; echo err-${index} >&2`, marker];
  const response = await driver.call('process/start', { processId: id, argv, cwd: '/tmp', env: ENV, tty });
  if (response.error) {
    tracker.error(`${id}: process/start: ${response.error.message}`);
    return tracker.settle(entry, {}, false);
  }
  const closed = await withTimeout(entry.closed, CLOSE_TIMEOUT_MS, false);
  const expected = tty ? { pty: `out-${index}\r\nerr-${index}\r\n` } : { stdout: `out-${index}\n`, stderr: `err-${index}\n` };
  tracker.settle(entry, expected, closed);
}

// ---- fs calls -------------------------------------------------------------

/** A mix of the four fs calls on a temp dir; reads target files no call writes, so their content is known. */
async function runFs(driver, total) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'soak-fs-'));
  const readable = (n) => `${dir}/r${n}`;
  for (let n = 0; n < FS_FILES; n++) fs.writeFileSync(readable(n), `r-${n}\n`);
  let errors = 0;
  const calls = [
    (i) => ['fs/writeFile', { path: `${dir}/w${i % FS_FILES}`, dataBase64: b64(`w-${i}`) }, (r) => r !== undefined],
    (i) => ['fs/readFile', { path: readable(i % FS_FILES) }, (r) => r?.dataBase64 === b64(`r-${i % FS_FILES}\n`)],
    (i) => ['fs/getMetadata', { path: readable(i % FS_FILES) }, (r) => r?.isFile === true && r.isDirectory === false],
    () => ['fs/readDirectory', { path: dir }, (r) => r?.entries?.filter((e) => /^r\d+$/.test(e.fileName) && e.isFile).length === FS_FILES],
  ];
  const started = performance.now();
  await pool(total, CONCURRENCY, async (i) => {
    const [method, params, check] = calls[i % calls.length](i);
    const response = await driver.call(method, params);
    if (response.error || !check(response.result)) {
      if (errors++ < 3) console.error(`  ${method} ${JSON.stringify(params)}: ${JSON.stringify(response)}`);
    }
  });
  const seconds = (performance.now() - started) / 1000;
  fs.rmSync(dir, { recursive: true, force: true });
  return { seconds, errors };
}

// ---- one server -----------------------------------------------------------

const live = new Set(); // drivers to kill if the time bound strikes

async function soak(label, command) {
  const marker = `soak-${process.pid}-${label}`;
  const zombiesBefore = zombies().length;
  const wallStart = performance.now();
  const driver = await Driver.start(command);
  driver.parseOutput = true; // hand process/output to listeners instead of only counting bytes
  live.add(driver);
  const pid = driver.child.pid; // the shell execs the command, so this is the server itself
  let exitStatus = 'running';
  driver.child.on('exit', (code, signal) => (exitStatus = signal ? `signal ${signal}` : `exit ${code}`));
  driver.child.stdin.on('error', () => {}); // a dying server is reported below, not as EPIPE
  let closing = false;
  driver.exited.then(() => {
    if (closing) return;
    console.error(`soak: ${label} server died mid-run (${exitStatus})`);
    process.exit(1);
  });
  const tracker = new Tracker(driver);
  const before = { fds: fdCount(pid), rss: rssKiB(pid) };

  console.error(`${label}: ${PROCESSES} processes (pid ${pid})…`);
  const processStart = performance.now();
  await pool(PROCESSES, CONCURRENCY, (i) => runProcess(driver, tracker, i, marker));
  const processSeconds = (performance.now() - processStart) / 1000;
  console.error(`${label}: ${FS_CALLS} fs calls…`);
  const fsRun = await runFs(driver, FS_CALLS);

  const after = { fds: fdCount(pid), rss: rssKiB(pid), serverZombies: zombies().filter((z) => z.ppid === pid).length };
  const leftoversRun = leftovers(marker);
  await sleep(SETTLE_MS); // let retained processes expire
  const settled = { fds: fdCount(pid), rss: rssKiB(pid), serverZombies: zombies().filter((z) => z.ppid === pid).length };

  closing = true;
  await driver.close(); // ends stdin; the driver SIGKILLs after 10 s if the server does not exit
  live.delete(driver);
  await sleep(1000); // helpers that outlive the server by a moment are then counted alike on every run
  for (const message of tracker.firstErrors) console.error(`  ${label}: ${message}`);
  return {
    wall: (performance.now() - wallStart) / 1000,
    processSeconds,
    fsRun,
    tracker,
    before,
    after,
    settled,
    exitStatus,
    leftoversRun,
    leftoversEnd: leftovers(marker),
    zombieDelta: zombies().length - zombiesBefore,
  };
}

// ---- report ---------------------------------------------------------------

const MiB = (kib) => `${(kib / 1024).toFixed(1)} MiB`;
const ROWS = [
  ['wall time', (r) => `${r.wall.toFixed(1)} s`],
  ['process phase', (r) => `${r.processSeconds.toFixed(1)} s`],
  ['processes/s', (r) => (PROCESSES / r.processSeconds).toFixed(0)],
  ['fs phase', (r) => `${r.fsRun.seconds.toFixed(1)} s`],
  ['fs calls/s', (r) => (FS_CALLS / r.fsRun.seconds).toFixed(0)],
  ['notifications lost', (r) => r.tracker.lost, (r) => r.tracker.lost === 0, '= 0'],
  ['protocol errors', (r) => r.tracker.errors, (r) => r.tracker.errors === 0, '= 0'],
  ['fs errors', (r) => r.fsRun.errors, (r) => r.fsRun.errors === 0, '= 0'],
  ['open fds before', (r) => r.before.fds],
  ['open fds after run', (r) => r.after.fds],
  ['open fds after retention', (r) => r.settled.fds],
  ['fd growth (run)', (r) => r.after.fds - r.before.fds, (r) => r.after.fds - r.before.fds <= 4, '<= 4'],
  ['RSS before', (r) => MiB(r.before.rss)],
  ['RSS after run', (r) => MiB(r.after.rss)],
  ['RSS after retention', (r) => MiB(r.settled.rss)],
  [
    'zombies of server (run/retention)',
    (r) => `${r.after.serverZombies}/${r.settled.serverZombies}`,
    (r) => r.after.serverZombies + r.settled.serverZombies === 0,
    '= 0',
  ],
  ['zombies on machine, delta', (r) => r.zombieDelta],
  ['leftover children (run/end)', (r) => `${r.leftoversRun}/${r.leftoversEnd}`, (r) => r.leftoversRun + r.leftoversEnd === 0, '= 0'],
  ['server shutdown', (r) => r.exitStatus],
];

function report(results) {
  const labels = Object.keys(results);
  const table = [['figure', ...labels, 'must hold']];
  let ok = true;
  for (const [name, show, holds, rule] of ROWS) {
    const cells = labels.map((label) => {
      const passed = holds === undefined || holds(results[label]);
      ok &&= passed;
      return `${show(results[label])}${passed ? '' : ' FAIL'}`;
    });
    table.push([name, ...cells, rule ?? '']);
  }
  const widths = table[0].map((_, column) => Math.max(...table.map((row) => String(row[column]).length)));
  console.log(`\nsoak: ${PROCESSES} processes (1 in ${PTY_EVERY} on a PTY), ${FS_CALLS} fs calls, ${CONCURRENCY} in flight`);
  for (const row of table) console.log(row.map((cell, column) => String(cell).padEnd(widths[column])).join('  '));
  console.log(`retention: ours --retention-ms ${RETENTION_MS}; figures "after retention" are ${SETTLE_MS} ms after the run.`);
  if (values.peer !== undefined) console.log("note: the peer's retention window may differ (the reference keeps closed processes 30 s).");
  console.log('note: PID 1 here does not reap orphans, and other work on the machine may add zombies: the machine delta is informative.');
  console.log(ok ? 'result: PASS' : 'result: FAIL');
  return ok;
}

const sides = { ours: OURS, ...(values.peer !== undefined ? { peer: values.peer } : {}) };
setTimeout(() => {
  console.error(`soak: aborted after the ${(TIME_LIMIT_MS * Object.keys(sides).length) / 60_000} min time bound`);
  for (const driver of live) driver.child.kill('SIGKILL');
  process.exit(1);
}, TIME_LIMIT_MS * Object.keys(sides).length).unref();

const results = {};
for (const [label, command] of Object.entries(sides)) results[label] = await soak(label, command);
process.exitCode = report(results) ? 0 : 1;
