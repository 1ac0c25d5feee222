#!/usr/bin/env node
/**
 * `npm run bench [-- --peer "<command>"] [--quick] [--transport stdio|ws]`:
 * measures this exec-server (and optionally another exec-server, e.g. the
 * reference) on this machine, and prints medians with ratios. Not a test: it
 * asserts nothing. `--transport ws` runs the throughput and round-trip
 * workloads (pipe, pty, rtt) over a WebSocket listener instead of stdio
 * (`bench/transport.mjs`); the others always use stdio.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { rawFileMiBps, rawPipeMiBps, rawPtyMiBps } from './bench/raw.mjs';
import { blockTransfer } from './bench/blocks.mjs';
import { sandboxOverhead } from './bench/sandbox.mjs';
import { printSummary } from './bench/summary.mjs';
import { treeCopyAndRemove } from './bench/trees.mjs';
import { formatStartup, idleRss, startup, startupSettings } from './bench/startup.mjs';
import { fmt, mapValues, median, MiB, RAW } from './bench/stats.mjs';
import { TRANSPORTS } from './bench/transport.mjs';
import {
  concurrency,
  fairness,
  fileTransfer,
  httpRoundTrip,
  roundTrip,
  spawnLatency,
  stalledGrowth,
  throughput,
} from './bench/workloads.mjs';
import { loadedRoundTrip } from './bench/round-trips.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    peer: { type: 'string' },
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    'block-mib': { type: 'string' },
    transport: { type: 'string', default: 'stdio' },
  },
});
if (!TRANSPORTS.includes(values.transport)) throw new Error(`--transport ${values.transport}: expected ${TRANSPORTS.join(' or ')}`);
/** The transport of the workloads that take one. */
const transport = values.transport;
const OURS = `${process.execPath} ${path.join(root, 'dist/cli/main.js')}`;
/** A bare Node server that only spawns: the floor for the spawn workload. */
const FLOOR = `${process.execPath} ${path.join(root, 'scripts/bench/floor-server.mjs')}`;
const runs = values.quick ? 1 : 3;
const blockBytes = Number(values['block-mib'] ?? 256) * 1024 * 1024;
/** The median of each block figure over the runs; exact only if every run was. */
const combineBlocks = (results) => ({
  ...Object.fromEntries(
    [
      'readMiBps',
      'readRssGrowthMiB',
      'readCpuMs',
      'readClientCpuMs',
      'writeMiBps',
      'writeRssGrowthMiB',
      'writeCpuMs',
      'writeClientCpuMs',
      'readAgainMiBps',
      'readAgainCpuMs',
      'readAgainClientCpuMs',
      'writeAgainMiBps',
      'writeAgainCpuMs',
    ].map((key) => [key, median(results.map((r) => r[key]))]),
  ),
  exact: results.every((r) => r.exact),
});

/**
 * The spawn latency with a bare Node server (`bench/floor-server.mjs`) as one
 * more contestant: what Node's own spawn costs here, without our layers.
 */
async function spawnLatencyWithFloor(commands) {
  const { floor, results } = withoutFloor(await spawnLatency({ ...commands, [RAW]: FLOOR }));
  return mapValues(results, (result) => ({ ...result, floorP50: floor.p50 }));
}

/** The floor's result taken out of a workload's results (it ran as the contestant `RAW`). */
function withoutFloor(results) {
  const { [RAW]: floor, ...rest } = results;
  return { floor, results: rest };
}

/**
 * The round trip with the bare Node server as one more contestant (over
 * stdio only: it speaks nothing else): what a Node server pays here before
 * any layer of ours.
 */
async function roundTripWithFloor(commands, cold = false) {
  if (transport !== 'stdio') return roundTrip(commands, transport, cold);
  const { floor, results } = withoutFloor(await roundTrip({ ...commands, [RAW]: FLOOR }, transport, cold));
  return mapValues(results, (result) => ({ ...result, floorP50: floor.p50, floorP99: floor.p99 }));
}

/**
 * Block I/O with the bare Node server as one more contestant: the rate a Node
 * server reaches here with one read or write per block and nothing else.
 */
async function blocksWithFloor(commands) {
  const measure = (command) => blockTransfer(command, blockBytes);
  const { floor, results } = withoutFloor(await alternating({ ...commands, [RAW]: FLOOR }, measure, combineBlocks));
  const { readMiBps, readAgainMiBps, readCpuMs } = floor;
  return mapValues(results, (result) => ({
    ...result,
    floorReadMiBps: readMiBps,
    floorReadAgainMiBps: readAgainMiBps,
    floorReadCpuMs: readCpuMs,
  }));
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
    async (command) => (command === null ? { mibps: await raw() } : throughput(command, bytes, tty, transport)),
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
    ['rtt', (all) => roundTripWithFloor(all)],
    ['rtt-cold', (all) => roundTripWithFloor(all, true)],
    ['rtt-loaded', (all) => loadedRoundTrip(all, transport)],
    ['spawn', spawnLatencyWithFloor],
    ['spawn-retained', (all) => spawnLatency(all, 150)],
    [
      'concurrency',
      (all) =>
        alternating(all, concurrency, (results) => ({
          seconds: median(results.map((r) => r.seconds)),
          complete: results.every((r) => r.complete),
        })),
    ],
    ['stalled', each(stalledGrowth)],
    ['fairness', each(fairness)],
    ['files', each((command) => fileTransfer(command, scratch, runs))],
    ['http', each((command) => httpRoundTrip(command, httpUrl))],
    ['sandbox', each((command) => sandboxOverhead(command))],
    ['blocks', blocksWithFloor],
    ['trees', treeCopyAndRemove],
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

let scratch;
let httpUrl;

async function main() {
  console.log(`exec-server benchmark on ${process.platform}/${process.arch}, node ${process.version}`);
  console.log(
    `transport: ${transport} (pipe, pty, rtt, rtt-cold, rtt-loaded${transport === 'stdio' ? '' : '; the other workloads over stdio'})`,
  );
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-bench-'));
  const web = http.createServer((_req, res) => res.end('ok'));
  await new Promise((resolve) => web.listen(0, '127.0.0.1', resolve));
  httpUrl = `http://127.0.0.1:${web.address().port}/`;
  const rawFile = await rawFileMiBps(scratch, runs);
  console.log(`raw fs.readFile ${fmt(rawFile.read)} MiB/s, fs.writeFile ${fmt(rawFile.write)} MiB/s (64 MiB)`);
  console.log(`ours: ${OURS}${values.peer ? `\npeer: ${values.peer}` : ''}\n`);
  if (!values.only || values.only.split(',').includes('startup')) {
    for (const { label, env } of startupSettings()) {
      console.log(formatStartup(label, await startup(OURS, values.peer, { env }), Boolean(values.peer), fmt));
      const rss = await idleRss(OURS, FLOOR, values.peer, { env });
      console.log(
        `idle RSS${label} (MiB, 1 s after initialize): ours ${fmt(rss.ours)}, bare Node server (floor) ${fmt(rss.floor)}` +
          `${values.peer ? `, peer ${fmt(rss.peer)} (ours/peer ${fmt(rss.ours / rss.peer, 2)}x)` : ''}`,
      );
    }
    console.log('');
  }
  const results = await measureAll(values.peer ? { ours: OURS, peer: values.peer } : { ours: OURS });
  const ours = results.ours;
  const peer = results.peer;

  await printSummary({ ours, peer, transport, rawFile, blockBytes });
  // In a fresh process: the local executor forks children from it, and fork() slows down as
  // the parent's memory grows (this process has just moved gigabytes through its buffers).
  if (!values.only || values.only.split(',').includes('client'))
    await new Promise((resolve) => {
      const child = spawn(process.execPath, [path.join(root, 'scripts/bench/client.mjs'), String(runs)], { stdio: 'inherit' });
      child.on('exit', resolve);
    });
  web.close();
  fs.rmSync(scratch, { recursive: true, force: true });
}

await main();
