#!/usr/bin/env node
/**
 * `npm run bench [-- --peer "<command>"] [--quick]`: measures this exec-server
 * (and optionally another stdio exec-server, e.g. the reference) on this
 * machine, and prints medians with ratios. Not a test: it asserts nothing.
 */
import { spawn } from 'node:child_process';
import { sandboxOverhead } from './bench/sandbox.mjs';
import { createRequire } from 'node:module';
import tty from 'node:tty';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Driver } from './bench/driver.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: { peer: { type: 'string' }, quick: { type: 'boolean', default: false }, only: { type: 'string' } },
});
const OURS = `${process.execPath} ${path.join(root, 'dist/cli/main.js')}`;
/** A bare Node server that only spawns: the floor for the spawn workload. */
const FLOOR = `${process.execPath} ${path.join(root, 'scripts/bench/floor-server.mjs')}`;
const MiB = 1024 * 1024;
const ENV = { PATH: '/usr/bin:/bin' };
const runs = values.quick ? 1 : 3;
/** The name under which a raw limit (no server at all, or a bare one) takes its turn among the servers. */
const RAW = '\u0000raw';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const ms = (ns) => Number(ns) / 1e6;

async function repeat(n, fn) {
  const results = [];
  for (let i = 0; i < n; i++) results.push(await fn());
  return median(results);
}

/** The raw limit: Node reading `head -c` through a plain pipe. */
async function rawPipeMiBps(bytes) {
  const started = process.hrtime.bigint();
  const child = spawn('head', ['-c', String(bytes), '/dev/zero'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let total = 0;
  child.stdout.on('data', (chunk) => (total += chunk.length));
  await new Promise((resolve) => child.on('close', resolve));
  return total / MiB / (ms(process.hrtime.bigint() - started) / 1000);
}

/**
 * The raw limit for a terminal: Node reading `head -c` through a PTY with no
 * server (node-pty's native fork, as the server uses it). A terminal hands
 * over at most 4 KiB per read, each passing through a kernel worker.
 */
async function rawPtyMiBps(bytes) {
  const { native } = createRequire(import.meta.url)('node-pty');
  const started = process.hrtime.bigint();
  let total = 0;
  await new Promise((resolve) => {
    let exited = false;
    let ended = false;
    const forked = native.fork('/usr/bin/head', ['-c', String(bytes), '/dev/zero'], ['PATH=/usr/bin:/bin'], '/', 80, 24, -1, -1, false, '', () => {
      exited = true;
      if (ended || total >= bytes) resolve();
    });
    const reader = new tty.ReadStream(forked.fd);
    reader.on('data', (chunk) => {
      total += chunk.length;
      if (total >= bytes && exited) resolve();
    });
    const end = () => {
      ended = true;
      if (exited) resolve();
    };
    reader.on('error', end); // EIO once the child's side closes
    reader.on('close', end);
  });
  return total / MiB / (ms(process.hrtime.bigint() - started) / 1000);
}

async function throughput(command, bytes, tty) {
  const driver = await Driver.start(command);
  try {
    const started = process.hrtime.bigint();
    const closed = driver.waitClosed('t');
    await driver.request('process/start', { processId: 't', argv: ['head', '-c', String(bytes), '/dev/zero'], cwd: '/', env: ENV, tty });
    await closed;
    const seconds = ms(process.hrtime.bigint() - started) / 1000;
    const got = driver.outputBytes.get('t') ?? 0;
    if (got !== bytes) return { mibps: NaN, note: `got ${got} of ${bytes} bytes` };
    return { mibps: bytes / MiB / seconds };
  } finally {
    await driver.close();
  }
}

/**
 * Runs `sample(driver)` on every server in alternating blocks, all servers
 * started and warmed up first: on a machine whose speed drifts (a shared
 * VM), one server measured minutes after the other can be off by 30%.
 */
async function interleaved(commands, { warmup, blocks, perBlock, sample, prepare }) {
  const names = Object.keys(commands);
  const drivers = {};
  try {
    for (const name of names) drivers[name] = await Driver.start(commands[name]);
    for (const name of names) await prepare?.(drivers[name]);
    for (const name of names) for (let i = 0; i < warmup; i++) await sample(drivers[name]);
    const samples = Object.fromEntries(names.map((name) => [name, []]));
    for (let block = 0; block < blocks; block++) {
      for (const name of names) for (let i = 0; i < perBlock; i++) samples[name].push(await sample(drivers[name]));
    }
    return samples;
  } finally {
    await Promise.all(Object.values(drivers).map((driver) => driver.close()));
  }
}

const summarize = (samples) => ({ p50: percentile(samples, 50), p99: percentile(samples, 99) });
const mapValues = (object, fn) => Object.fromEntries(Object.entries(object).map(([key, value]) => [key, fn(value)]));

/** fs/getMetadata round trip, µs. The warm-up covers JIT compilation stalls. */
async function roundTrip(commands) {
  const samples = await interleaved(commands, {
    warmup: 3000,
    blocks: 8,
    perBlock: 250,
    sample: async (driver) => {
      const started = process.hrtime.bigint();
      await driver.call('fs/getMetadata', { path: '/tmp' });
      return ms(process.hrtime.bigint() - started) * 1000;
    },
  });
  return mapValues(samples, summarize);
}

/** Runs `count` processes of 1 MiB output each; their output stays retained for 30 s. */
async function retainOutput(driver, count) {
  const ids = Array.from({ length: count }, (_, i) => `retained${i}`);
  const closed = ids.map((id) => driver.waitClosed(id));
  for (const processId of ids) {
    await driver.request('process/start', { processId, argv: ['head', '-c', String(MiB), '/dev/zero'], cwd: '/', env: ENV, tty: false });
  }
  await Promise.all(closed);
}

/**
 * `/bin/true` from process/start to process/closed, ms; with `retainedMiB`,
 * after that much output is retained by the server (a fork of the server
 * slows down as it grows).
 */
async function spawnLatency(commands, retainedMiB = 0) {
  let next = 0;
  const samples = await interleaved(commands, {
    prepare: (driver) => retainOutput(driver, retainedMiB),
    warmup: 20,
    blocks: 8,
    perBlock: 25,
    sample: async (driver) => {
      const processId = `s${next++}`;
      const started = process.hrtime.bigint();
      const closed = driver.waitClosed(processId);
      await driver.request('process/start', { processId, argv: ['/bin/true'], cwd: '/', env: ENV, tty: false });
      await closed;
      return ms(process.hrtime.bigint() - started);
    },
  });
  return mapValues(samples, summarize);
}

/**
 * The spawn latency with a bare Node server (`bench/floor-server.mjs`) as one
 * more contestant: what Node's own spawn costs here, without our layers.
 */
async function spawnLatencyWithFloor(commands) {
  const results = await spawnLatency({ ...commands, [RAW]: FLOOR });
  const floorP50 = results[RAW].p50;
  delete results[RAW];
  return mapValues(results, (result) => ({ ...result, floorP50 }));
}

async function concurrency(command, count = 100, bytes = MiB) {
  const driver = await Driver.start(command);
  try {
    const started = process.hrtime.bigint();
    const ids = Array.from({ length: count }, (_, i) => `c${i}`);
    const closed = ids.map((id) => driver.waitClosed(id));
    await Promise.all(
      ids.map((processId) =>
        driver.request('process/start', { processId, argv: ['head', '-c', String(bytes), '/dev/zero'], cwd: '/', env: ENV, tty: false }),
      ),
    );
    await Promise.all(closed);
    const total = ids.reduce((n, id) => n + (driver.outputBytes.get(id) ?? 0), 0);
    return { seconds: ms(process.hrtime.bigint() - started) / 1000, complete: total === count * bytes };
  } finally {
    await driver.close();
  }
}

function rss(pid) {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'latin1'))[1]) * 1024;
  } catch {
    return NaN;
  }
}

/**
 * RSS growth while the client reads nothing and a child floods: sampled
 * during the stall only (the flow after the client resumes is reported
 * separately as `flowingPeakMiB`).
 */
async function stalledGrowth(command, bytes = 512 * MiB, stallMs = 3000) {
  const driver = await Driver.start(command);
  try {
    const pid = driver.child.pid;
    const before = rss(pid);
    const closed = driver.waitClosed('flood');
    driver.child.stdout.pause();
    driver.send({ id: 'flood', method: 'process/start', params: { processId: 'flood', argv: ['head', '-c', String(bytes), '/dev/zero'], cwd: '/', env: ENV, tty: false } });
    let stalledPeak = before;
    const stallTimer = setInterval(() => (stalledPeak = Math.max(stalledPeak, rss(pid))), 50);
    await new Promise((resolve) => setTimeout(resolve, stallMs));
    clearInterval(stallTimer);
    stalledPeak = Math.max(stalledPeak, rss(pid));
    let flowingPeak = stalledPeak;
    const flowTimer = setInterval(() => (flowingPeak = Math.max(flowingPeak, rss(pid))), 50);
    driver.child.stdout.resume();
    await closed;
    clearInterval(flowTimer);
    return {
      growthMiB: (stalledPeak - before) / MiB,
      flowingPeakMiB: (flowingPeak - before) / MiB,
      complete: driver.outputBytes.get('flood') === bytes,
    };
  } finally {
    await driver.close();
  }
}

/** Worst delay of a quiet process's output while another process floods. */
async function fairness(command) {
  const driver = await Driver.start(command);
  try {
    let worst = 0;
    const quietTicks = 40;
    driver.parseOutput = true;
    driver.listeners.add((m) => {
      if (m.method !== 'process/output' || m.params.processId !== 'quiet') return;
      for (const line of Buffer.from(m.params.chunk, 'base64').toString().split('\n')) {
        if (line) worst = Math.max(worst, Date.now() - Number(line.slice(0, 13)));
      }
    });
    const quietClosed = driver.waitClosed('quiet');
    const floodClosed = driver.waitClosed('flood');
    await driver.request('process/start', { processId: 'flood', argv: ['head', '-c', String(512 * MiB), '/dev/zero'], cwd: '/', env: ENV, tty: false });
    const script = `for i in $(seq ${quietTicks}); do date +%s%3N; sleep 0.02; done`;
    await driver.request('process/start', { processId: 'quiet', argv: ['sh', '-c', script], cwd: '/', env: ENV, tty: false });
    await quietClosed;
    await driver.request('process/terminate', { processId: 'flood' });
    await floodClosed;
    return { worstMs: worst };
  } finally {
    await driver.close();
  }
}

/** fs/readFile and fs/writeFile of a 64 MiB file, MiB/s, and the server's RSS growth while writing, as a multiple of the payload. */
async function fileTransfer(command, dir) {
  const driver = await Driver.start(command);
  try {
    const file = path.join(dir, 'bench-64m');
    const data = Buffer.alloc(64 * MiB, 7);
    const base64 = data.toString('base64');
    const before = rss(driver.child.pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rss(driver.child.pid))), 5);
    const write = await repeat(runs, async () => {
      const started = process.hrtime.bigint();
      await driver.request('fs/writeFile', { path: file, dataBase64: base64 });
      return 64 / (ms(process.hrtime.bigint() - started) / 1000);
    });
    clearInterval(sampler);
    const read = await repeat(runs, async () => {
      const started = process.hrtime.bigint();
      const result = await driver.request('fs/readFile', { path: file });
      if (result.dataBase64.length !== base64.length) throw new Error('short read');
      return 64 / (ms(process.hrtime.bigint() - started) / 1000);
    });
    return { readMiBps: read, writeMiBps: write, writeRssGrowthX: (peak - before) / (64 * MiB) };
  } finally {
    await driver.close();
  }
}

/** http/request round trip against a loopback server, µs. */
async function httpRoundTrip(command, url, count = 500) {
  const driver = await Driver.start(command);
  try {
    const params = { method: 'GET', url, requestId: 'r', headers: [] };
    for (let i = 0; i < 50; i++) await driver.request('http/request', params);
    const samples = [];
    for (let i = 0; i < count; i++) {
      const started = process.hrtime.bigint();
      await driver.request('http/request', params);
      samples.push(ms(process.hrtime.bigint() - started) * 1000);
    }
    return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
  } finally {
    await driver.close();
  }
}

/** `runs` runs of `measure(command)`, the servers taking turns run by run, then `combine`d. */
async function alternating(commands, measure, combine) {
  const samples = mapValues(commands, () => []);
  for (let run = 0; run < runs; run++) {
    for (const [name, command] of Object.entries(commands)) samples[name].push(await measure(command));
  }
  return mapValues(samples, combine);
}

/**
 * Throughput on every server, run by run, with the raw limit (Node reading
 * the same output with no server) as one more contestant in each round: the
 * fraction of it is only meaningful if both were measured side by side.
 */
async function alternatingThroughput(commands, bytes, tty) {
  const raw = () => (tty ? rawPtyMiBps(bytes) : rawPipeMiBps(bytes));
  const contestants = { ...commands, [RAW]: null };
  const results = await alternating(
    contestants,
    async (command) => (command === null ? { mibps: await raw() } : throughput(command, bytes, tty)),
    (samples) => ({ mibps: median(samples.map((r) => r.mibps)) }),
  );
  const rawMiBps = results[RAW].mibps;
  delete results[RAW];
  return mapValues(results, (result) => ({ ...result, rawMiBps }));
}

/**
 * Each workload runs on this server and on the peer before the next one
 * starts; the latency and throughput workloads alternate between them
 * within the workload, so that drift skews both alike.
 */
async function measureAll(commands) {
  const each = (fn) => async (all) => {
    const results = {};
    for (const [name, command] of Object.entries(all)) results[name] = await fn(command).catch((error) => ({ error: error.message }));
    return results;
  };
  const workloads = [
    ['pipe', (all) => alternatingThroughput(all, 256 * MiB, false)],
    ['pty', (all) => alternatingThroughput(all, 64 * MiB, true)],
    ['rtt', roundTrip],
    ['spawn', spawnLatencyWithFloor],
    ['spawn-retained', (all) => spawnLatency(all, 150)],
    ['concurrency', (all) => alternating(all, concurrency, (results) => ({ seconds: median(results.map((r) => r.seconds)), complete: results.every((r) => r.complete) }))],
    ['stalled', each(stalledGrowth)],
    ['fairness', each(fairness)],
    ['files', each((command) => fileTransfer(command, scratch))],
    ['http', each((command) => httpRoundTrip(command, httpUrl))],
    ['sandbox', each((command) => sandboxOverhead(command))],
  ];
  const results = mapValues(commands, () => ({}));
  const only = values.only?.split(',');
  for (const [label, fn] of workloads) {
    if (only && !only.includes(label)) continue;
    const measured = await fn(commands).catch((error) => mapValues(commands, () => ({ error: error.message })));
    for (const name of Object.keys(commands)) {
      results[name][label] = measured[name];
      console.log(`${label.padEnd(12)} ${name.padEnd(5)} ${JSON.stringify(measured[name])}`);
    }
  }
  return results;
}

const fmt = (x, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');

let scratch;
let httpUrl;

/** The raw limit for files: Node's own fs.readFile / fs.writeFile of 64 MiB. */
async function rawFileMiBps() {
  const file = path.join(scratch, 'raw-64m');
  const data = Buffer.alloc(64 * MiB, 7);
  const write = await repeat(runs, async () => {
    const started = process.hrtime.bigint();
    await fs.promises.writeFile(file, data);
    return 64 / (ms(process.hrtime.bigint() - started) / 1000);
  });
  const read = await repeat(runs, async () => {
    const started = process.hrtime.bigint();
    await fs.promises.readFile(file);
    return 64 / (ms(process.hrtime.bigint() - started) / 1000);
  });
  return { read, write };
}

async function main() {
  console.log(`exec-server benchmark on ${process.platform}/${process.arch}, node ${process.version}`);
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-bench-'));
  const web = http.createServer((_req, res) => res.end('ok'));
  await new Promise((resolve) => web.listen(0, '127.0.0.1', resolve));
  httpUrl = `http://127.0.0.1:${web.address().port}/`;
  const rawFile = await rawFileMiBps();
  console.log(`raw fs.readFile ${fmt(rawFile.read)} MiB/s, fs.writeFile ${fmt(rawFile.write)} MiB/s (64 MiB)`);
  console.log(`ours: ${OURS}${values.peer ? `\npeer: ${values.peer}` : ''}\n`);
  const results = await measureAll(values.peer ? { ours: OURS, peer: values.peer } : { ours: OURS });
  const ours = results.ours;
  const peer = results.peer;

  console.log('\n## summary (median)');
  // [label, workload, field]
  const rows = [
    ['pipe MiB/s (256 MiB)', 'pipe', 'mibps'],
    ['pty MiB/s (64 MiB)', 'pty', 'mibps'],
    ['rtt p50 µs', 'rtt', 'p50'],
    ['rtt p99 µs', 'rtt', 'p99'],
    ['spawn p50 ms', 'spawn', 'p50'],
    ['spawn p99 ms', 'spawn', 'p99'],
    ['spawn, 150 MiB kept p50', 'spawn-retained', 'p50'],
    ['100 x 1 MiB s', 'concurrency', 'seconds'],
    ['stalled RSS +MiB', 'stalled', 'growthMiB'],
    ['quiet worst ms', 'fairness', 'worstMs'],
    ['fs/readFile MiB/s', 'files', 'readMiBps'],
    ['fs/writeFile MiB/s', 'files', 'writeMiBps'],
    ['fs/writeFile RSS/payload', 'files', 'writeRssGrowthX'],
    ['http rtt p50 µs', 'http', 'p50'],
    ['spawn p50 ms (plain)', 'sandbox', 'plainP50'],
    ['sandboxed spawn p50 ms', 'sandbox', 'sandboxedP50'],
    ['sandboxed spawn p99 ms', 'sandbox', 'sandboxedP99'],
    ['sandbox adds p50 ms', 'sandbox', 'addedP50'],
  ];
  console.log(`${'metric'.padEnd(24)}${'ours'.padStart(10)}${'peer'.padStart(10)}${'ours/peer'.padStart(11)}`);
  for (const [label, workload, field] of rows) {
    const a = ours[workload]?.[field];
    const b = peer?.[workload]?.[field];
    const ratio = Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}x` : '';
    console.log(`${label.padEnd(24)}${fmt(a).padStart(10)}${(peer ? fmt(b) : '').padStart(10)}${ratio.padStart(11)}`);
  }
  const fraction = (workload) => {
    const raw = ours[workload]?.rawMiBps;
    const of = (result) => fmt(result?.mibps / raw, 2);
    return `${of(ours[workload])}${peer ? ` (peer: ${of(peer[workload])})` : ''}; raw ${fmt(raw)} MiB/s, measured in turn with the servers`;
  };
  console.log(`pipe throughput as a fraction of Node's raw pipe read: ${fraction('pipe')}`);
  console.log(`PTY throughput as a fraction of Node's raw PTY read: ${fraction('pty')}`);
  const spawnFloor = ours.spawn?.floorP50;
  const overFloor = (result) => fmt(result?.p50 / spawnFloor, 2);
  console.log(`spawn p50 as a multiple of a bare Node server's (scripts/bench/floor-server.mjs): ${overFloor(ours.spawn)}${peer ? ` (peer: ${overFloor(peer.spawn)})` : ''}; floor ${fmt(spawnFloor, 2)} ms, measured in turn with the servers`);
  console.log(`fs/readFile as a fraction of fs.readFile: ${fmt(ours.files?.readMiBps / rawFile.read, 2)}; fs/writeFile of fs.writeFile: ${fmt(ours.files?.writeMiBps / rawFile.write, 2)}`);
  // In a fresh process: the local executor forks children from it, and fork() slows down as
  // the parent's memory grows (this process has just moved gigabytes through its buffers).
  if (!values.only || values.only.split(',').includes('client')) await new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(root, 'scripts/bench/client.mjs'), String(runs)], { stdio: 'inherit' });
    child.on('exit', resolve);
  });
  web.close();
  fs.rmSync(scratch, { recursive: true, force: true });
}

await main();
