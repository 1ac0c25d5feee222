// The workloads `npm run bench` measures, each on one server command (or several, interleaved).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Driver } from './driver.mjs';
import { coldRoundTrip, metadataRoundTrip } from './round-trips.mjs';
import { ENV, MiB, mapValues, ms, percentile, repeat, rss, summarize } from './stats.mjs';

/**
 * Paths of the workloads that take `--transport` go as `file://` URIs, which
 * both generations of server take (Codex 0.169's refuses plain paths), as
 * in the blocks and sandbox workloads.
 */
const ROOT_URI = pathToFileURL('/').href;

/** `process/start` params: `argv` in `/` (as a URI, which both generations take) with the bench's environment. */
const startParams = (processId, argv, tty = false) => ({ processId, argv, cwd: ROOT_URI, env: ENV, tty });
/** `head -c bytes /dev/zero`: output of a known size. */
const zeros = (bytes) => ['head', '-c', String(bytes), '/dev/zero'];

/** `head -c bytes` on a pipe or a PTY, from process/start to process/closed, MiB/s. */
export async function throughput(command, bytes, tty, transport) {
  const driver = await Driver.start(command, { transport });
  try {
    const started = process.hrtime.bigint();
    const closed = driver.waitClosed('t');
    await driver.request('process/start', startParams('t', zeros(bytes), tty));
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
async function interleaved(commands, { warmup, blocks, perBlock, sample, prepare, transport }) {
  const names = Object.keys(commands);
  const drivers = {};
  try {
    for (const name of names) drivers[name] = await Driver.start(commands[name], { transport });
    for (const name of names) await prepare?.(drivers[name]);
    for (const name of names) for (let i = 0; i < warmup; i++) await sample(drivers[name]);
    const samples = Object.fromEntries(names.map((name) => [name, []]));
    for (let block = 0; block < blocks; block++) {
      // Each server goes first in every other block, so that neither always meets a colder client.
      const order = block % 2 === 0 ? names : [...names].reverse();
      for (const name of order) for (let i = 0; i < perBlock; i++) samples[name].push(await sample(drivers[name]));
    }
    return samples;
  } finally {
    await Promise.all(Object.values(drivers).map((driver) => driver.close()));
  }
}

/**
 * fs/getMetadata round trip, µs: after a warm-up that covers JIT compilation
 * stalls, or (`cold`) over the first 5,000 requests of fresh servers.
 */
export async function roundTrip(commands, transport, cold = false) {
  if (cold) return coldRoundTrip(commands, transport);
  const samples = await interleaved(commands, { transport, warmup: 3000, blocks: 8, perBlock: 250, sample: metadataRoundTrip });
  return mapValues(samples, summarize);
}

/** Runs `count` processes of 1 MiB output each; their output stays retained for 30 s. */
async function retainOutput(driver, count) {
  const ids = Array.from({ length: count }, (_, i) => `retained${i}`);
  const closed = ids.map((id) => driver.waitClosed(id));
  for (const processId of ids) {
    await driver.request('process/start', startParams(processId, zeros(MiB)));
  }
  await Promise.all(closed);
}

/**
 * `/bin/true` from process/start to process/closed, ms; with `retainedMiB`,
 * after that much output is retained by the server (a fork of the server
 * slows down as it grows).
 */
export async function spawnLatency(commands, retainedMiB = 0) {
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
      await driver.request('process/start', startParams(processId, ['/bin/true']));
      await closed;
      return ms(process.hrtime.bigint() - started);
    },
  });
  return mapValues(samples, summarize);
}

export async function concurrency(command, count = 100, bytes = MiB) {
  const driver = await Driver.start(command);
  try {
    const started = process.hrtime.bigint();
    const ids = Array.from({ length: count }, (_, i) => `c${i}`);
    const closed = ids.map((id) => driver.waitClosed(id));
    await Promise.all(ids.map((processId) => driver.request('process/start', startParams(processId, zeros(bytes)))));
    await Promise.all(closed);
    const total = ids.reduce((n, id) => n + (driver.outputBytes.get(id) ?? 0), 0);
    return { seconds: ms(process.hrtime.bigint() - started) / 1000, complete: total === count * bytes };
  } finally {
    await driver.close();
  }
}

/**
 * RSS growth while the client reads nothing and a child floods: sampled
 * during the stall only (the flow after the client resumes is reported
 * separately as `flowingPeakMiB`); `stalledRssMiB` and `flowingRssMiB` are
 * the same peaks, absolute.
 */
export async function stalledGrowth(command, bytes = 512 * MiB, stallMs = 3000) {
  const driver = await Driver.start(command);
  try {
    const pid = driver.child.pid;
    const before = rss(pid);
    const closed = driver.waitClosed('flood');
    driver.child.stdout.pause();
    driver.send({
      id: 'flood',
      method: 'process/start',
      params: startParams('flood', zeros(bytes)),
    });
    let stalledPeak = before;
    let flowingPeak = before;
    const sample = { stall: undefined, flow: undefined };
    try {
      sample.stall = setInterval(() => (stalledPeak = Math.max(stalledPeak, rss(pid))), 50);
      await new Promise((resolve) => setTimeout(resolve, stallMs));
      clearInterval(sample.stall);
      stalledPeak = Math.max(stalledPeak, rss(pid));
      flowingPeak = stalledPeak;
      sample.flow = setInterval(() => (flowingPeak = Math.max(flowingPeak, rss(pid))), 50);
      driver.child.stdout.resume();
      await closed;
    } finally {
      // However the flood ends (a server that dies rejects `closed`): no sampler keeps the bench alive.
      clearInterval(sample.stall);
      clearInterval(sample.flow);
    }
    return {
      growthMiB: (stalledPeak - before) / MiB,
      flowingPeakMiB: (flowingPeak - before) / MiB,
      // Absolute, as issue 15 states its target (a server that starts larger pays for it here).
      stalledRssMiB: stalledPeak / MiB,
      flowingRssMiB: flowingPeak / MiB,
      complete: driver.outputBytes.get('flood') === bytes,
    };
  } finally {
    await driver.close();
  }
}

/** Worst delay of a quiet process's output while another process floods. */
export async function fairness(command) {
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
    await driver.request('process/start', startParams('flood', zeros(512 * MiB)));
    const script = `for i in $(seq ${quietTicks}); do date +%s%3N; sleep 0.02; done`;
    await driver.request('process/start', startParams('quiet', ['sh', '-c', script]));
    await quietClosed;
    await driver.request('process/terminate', { processId: 'flood' });
    await floodClosed;
    return { worstMs: worst };
  } finally {
    await driver.close();
  }
}

/** fs/readFile and fs/writeFile of a 64 MiB file, MiB/s, and the server's RSS growth while writing, as a multiple of the payload. */
export async function fileTransfer(command, dir, runs) {
  const driver = await Driver.start(command);
  let sampler;
  try {
    // A URI, which both generations take (Codex 0.169's refuses a plain path).
    const file = pathToFileURL(path.join(dir, 'bench-64m')).href;
    const data = Buffer.alloc(64 * MiB, 7);
    const base64 = data.toString('base64');
    const before = rss(driver.child.pid);
    let peak = before;
    sampler = setInterval(() => (peak = Math.max(peak, rss(driver.child.pid))), 5);
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
    // Also when a request failed: a live interval kept the bench from ever exiting.
    clearInterval(sampler);
    await driver.close();
  }
}

/** http/request round trip against a loopback server, µs. */
export async function httpRoundTrip(command, url, count = 500) {
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
