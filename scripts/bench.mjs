#!/usr/bin/env node
/**
 * `npm run bench [-- --peer "<command>"] [--quick]`: measures this exec-server
 * (and optionally another stdio exec-server, e.g. the reference) on this
 * machine, and prints medians with ratios. Not a test: it asserts nothing.
 */
import { spawn } from 'node:child_process';
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
const MiB = 1024 * 1024;
const ENV = { PATH: '/usr/bin:/bin' };
const runs = values.quick ? 1 : 3;

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

async function roundTrip(command, count = 2000) {
  const driver = await Driver.start(command);
  try {
    const samples = [];
    // Steady state: the first few thousand requests include JIT compilation stalls.
    for (let i = 0; i < 3000; i++) await driver.call('fs/getMetadata', { path: '/tmp' });
    for (let i = 0; i < count; i++) {
      const started = process.hrtime.bigint();
      await driver.call('fs/getMetadata', { path: '/tmp' });
      samples.push(ms(process.hrtime.bigint() - started) * 1000);
    }
    return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
  } finally {
    await driver.close();
  }
}

async function spawnLatency(command, count = 200) {
  const driver = await Driver.start(command);
  try {
    const samples = [];
    for (let i = 0; i < count; i++) {
      const processId = `s${i}`;
      const started = process.hrtime.bigint();
      const closed = driver.waitClosed(processId);
      await driver.request('process/start', { processId, argv: ['/bin/true'], cwd: '/', env: ENV, tty: false });
      await closed;
      samples.push(ms(process.hrtime.bigint() - started));
    }
    return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
  } finally {
    await driver.close();
  }
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

/** fs/readFile and fs/writeFile of a 64 MiB file, MiB/s. */
async function fileTransfer(command, dir) {
  const driver = await Driver.start(command);
  try {
    const file = path.join(dir, 'bench-64m');
    const data = Buffer.alloc(64 * MiB, 7);
    const base64 = data.toString('base64');
    const write = await repeat(runs, async () => {
      const started = process.hrtime.bigint();
      await driver.request('fs/writeFile', { path: file, dataBase64: base64 });
      return 64 / (ms(process.hrtime.bigint() - started) / 1000);
    });
    const read = await repeat(runs, async () => {
      const started = process.hrtime.bigint();
      const result = await driver.request('fs/readFile', { path: file });
      if (result.dataBase64.length !== base64.length) throw new Error('short read');
      return 64 / (ms(process.hrtime.bigint() - started) / 1000);
    });
    return { readMiBps: read, writeMiBps: write };
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

/**
 * Runs each workload on this server and then on the peer, back to back, so
 * that a machine whose speed drifts (a shared VM) skews both alike.
 */
async function measureAll(commands) {
  const workloads = [
    ['pipe', async (command) => ({ mibps: await repeat(runs, async () => (await throughput(command, 256 * MiB, false)).mibps) })],
    ['pty', async (command) => ({ mibps: await repeat(runs, async () => (await throughput(command, 64 * MiB, true)).mibps) })],
    ['rtt', (command) => roundTrip(command)],
    ['spawn', (command) => spawnLatency(command)],
    ['concurrency', (command) => concurrency(command)],
    ['stalled', (command) => stalledGrowth(command)],
    ['fairness', (command) => fairness(command)],
    ['files', (command) => fileTransfer(command, scratch)],
    ['http', (command) => httpRoundTrip(command, httpUrl)],
  ];
  const results = Object.fromEntries(Object.keys(commands).map((name) => [name, {}]));
  const only = values.only?.split(',');
  for (const [label, fn] of workloads) {
    if (only && !only.includes(label)) continue;
    for (const [name, command] of Object.entries(commands)) {
      try {
        results[name][label] = await fn(command);
      } catch (error) {
        results[name][label] = { error: error.message };
      }
      console.log(`${label.padEnd(12)} ${name.padEnd(5)} ${JSON.stringify(results[name][label])}`);
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
  const raw = await repeat(runs, () => rawPipeMiBps(256 * MiB));
  console.log(`raw pipe read by Node: ${fmt(raw)} MiB/s`);
  const rawFile = await rawFileMiBps();
  console.log(`raw fs.readFile ${fmt(rawFile.read)} MiB/s, fs.writeFile ${fmt(rawFile.write)} MiB/s (64 MiB)`);
  console.log(`ours: ${OURS}${values.peer ? `\npeer: ${values.peer}` : ''}\n`);
  const results = await measureAll(values.peer ? { ours: OURS, peer: values.peer } : { ours: OURS });
  const ours = results.ours;
  const peer = results.peer;

  console.log('\n## summary (median)');
  const rows = [
    ['pipe MiB/s (256 MiB)', ours.pipe?.mibps, peer?.pipe?.mibps, 'higher'],
    ['pty MiB/s (64 MiB)', ours.pty?.mibps, peer?.pty?.mibps, 'higher'],
    ['rtt p50 µs', ours.rtt?.p50, peer?.rtt?.p50, 'lower'],
    ['rtt p99 µs', ours.rtt?.p99, peer?.rtt?.p99, 'lower'],
    ['spawn p50 ms', ours.spawn?.p50, peer?.spawn?.p50, 'lower'],
    ['spawn p99 ms', ours.spawn?.p99, peer?.spawn?.p99, 'lower'],
    ['100 x 1 MiB s', ours.concurrency?.seconds, peer?.concurrency?.seconds, 'lower'],
    ['stalled RSS +MiB', ours.stalled?.growthMiB, peer?.stalled?.growthMiB, 'lower'],
    ['quiet worst ms', ours.fairness?.worstMs, peer?.fairness?.worstMs, 'lower'],
    ['fs/readFile MiB/s', ours.files?.readMiBps, peer?.files?.readMiBps, 'higher'],
    ['fs/writeFile MiB/s', ours.files?.writeMiBps, peer?.files?.writeMiBps, 'higher'],
    ['http rtt p50 µs', ours.http?.p50, peer?.http?.p50, 'lower'],
  ];
  console.log(`${'metric'.padEnd(24)}${'ours'.padStart(10)}${'peer'.padStart(10)}${'ours/peer'.padStart(11)}`);
  for (const [label, a, b] of rows) {
    const ratio = Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}x` : '';
    console.log(`${label.padEnd(24)}${fmt(a).padStart(10)}${(peer ? fmt(b) : '').padStart(10)}${ratio.padStart(11)}`);
  }
  console.log(`pipe throughput as a fraction of the raw pipe read: ${fmt(ours.pipe?.mibps / raw, 2)}`);
  console.log(`fs/readFile as a fraction of fs.readFile: ${fmt(ours.files?.readMiBps / rawFile.read, 2)}; fs/writeFile of fs.writeFile: ${fmt(ours.files?.writeMiBps / rawFile.write, 2)}`);
  // In a fresh process: the local executor forks children from it, and fork() slows down as
  // the parent's heap grows (this process has just moved gigabytes through its own heap).
  if (!values.only || values.only.split(',').includes('client')) await new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(root, 'scripts/bench/client.mjs'), String(runs)], { stdio: 'inherit' });
    child.on('exit', resolve);
  });
  web.close();
  fs.rmSync(scratch, { recursive: true, force: true });
}

await main();
