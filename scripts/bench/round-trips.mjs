/**
 * Round trips of `fs/getMetadata` on fresh servers: the `rtt-cold` workload
 * (each server alone, see `coldRoundTrip`) and `rtt-loaded`, the same with
 * every core kept busy by other processes, as a build beside the server
 * keeps them: what a server whose main thread waits for starved background
 * threads pays there shows in the p99 and the worst.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { Driver } from './driver.mjs';
import { median, ms, summarize } from './stats.mjs';

const TMP_URI = pathToFileURL('/tmp').href;

/** One fs/getMetadata round trip on `driver`, µs. */
export async function metadataRoundTrip(driver) {
  const started = process.hrtime.bigint();
  const answer = await driver.call('fs/getMetadata', { path: TMP_URI });
  if (answer.error) throw new Error(`fs/getMetadata: ${answer.error.message}`);
  return ms(process.hrtime.bigint() - started) * 1000;
}

/** How many fresh servers of each command the cold round trip measures, and how many requests each. */
const COLD_SERVERS = 3;
const COLD_REQUESTS = 5000;

/**
 * The first 5,000 requests of fresh servers, each measured alone: a fresh
 * server compiles its code on other threads for a while, and a server
 * interleaved with it would be measured against that work, not its own.
 * Servers take turns (the order reversed each round) so that drift skews
 * all alike; the samples of each command's servers are pooled. A first
 * round, not counted, warms this client's own code on every command: the
 * server measured first would otherwise meet a client still compiling.
 */
export async function coldRoundTrip(commands, transport, { servers = COLD_SERVERS, requests = COLD_REQUESTS } = {}) {
  const names = Object.keys(commands);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  const firsts = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = -1; round < servers; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      const driver = await Driver.start(commands[name], { transport });
      try {
        for (let i = 0; i < requests; i++) {
          const sample = await metadataRoundTrip(driver);
          if (round < 0) continue;
          samples[name].push(sample);
          if (i === 0) firsts[name].push(sample);
        }
      } finally {
        await driver.close();
      }
    }
  }
  // The first request apart too: ours loads the server after answering `initialize` (src/cli/main.ts).
  const worstLater = (name) => Math.max(...samples[name].filter((_, i) => i % requests !== 0)) / 1000;
  return Object.fromEntries(
    names.map((name) => [name, { ...summarize(samples[name]), firstMs: median(firsts[name]) / 1000, worstLaterMs: worstLater(name) }]),
  );
}

/** How many fresh servers of each command `rtt-loaded` measures, and how many requests each. */
const LOADED_SERVERS = 3;
const LOADED_REQUESTS = 2000;

/**
 * A loop that keeps one core busy. It ends itself once its parent is gone
 * (checked about every million turns), so that no end of the bench (a
 * crash, a kill) leaves it running; the bench kills it too.
 */
const BUSY_LOOP = 'const parent = process.ppid; for (let i = 0; ; i++) if ((i & 0xfffff) === 0 && process.ppid !== parent) process.exit();';

/** Busy loops at normal priority, one per core, each with a promise of its end (made now: it may end early). */
function startLoops() {
  return Array.from({ length: os.availableParallelism() }, () => {
    const child = spawn(process.execPath, ['-e', BUSY_LOOP], { stdio: 'ignore' });
    const ended = new Promise((resolve) => {
      child.once('exit', resolve);
      child.once('error', resolve);
    });
    const started = new Promise((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    return { child, ended, started };
  });
}

async function stopLoops(loops) {
  for (const { child } of loops) child.kill('SIGKILL');
  await Promise.all(loops.map(({ ended }) => ended));
}

/** `coldRoundTrip` with every core busy: p50 and p99 in µs; the first request and the worst after it in ms. */
export async function loadedRoundTrip(commands, transport) {
  const loops = startLoops();
  const killOnExit = () => {
    for (const { child } of loops) child.kill('SIGKILL');
  };
  process.on('exit', killOnExit);
  try {
    await Promise.all(loops.map(({ started }) => started));
    return await coldRoundTrip(commands, transport, { servers: LOADED_SERVERS, requests: LOADED_REQUESTS });
  } finally {
    await stopLoops(loops);
    process.off('exit', killOnExit);
  }
}
