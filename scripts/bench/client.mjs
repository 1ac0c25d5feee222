/**
 * Workloads through the client library and the executor layer, against
 * this package's server. Run in a fresh process by scripts/bench.mjs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';

const MiB = 1024 * 1024;
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

/** MiB/s of process output delivered to an async-iterator consumer, and the client's CPU. */
async function clientThroughput(lib, bytes) {
  const client = await lib.ExecServerClient.spawn();
  try {
    const cpu = process.cpuUsage();
    const started = process.hrtime.bigint();
    const session = await client.start({ argv: ['head', '-c', String(bytes), '/dev/zero'], env: { PATH: '/usr/bin:/bin' } });
    let received = 0;
    for await (const event of session) if (event.type === 'output') received += event.chunk.length;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const used = process.cpuUsage(cpu);
    if (received !== bytes) throw new Error(`received ${received} of ${bytes}`);
    return { mibps: bytes / MiB / seconds, clientCpuShare: (used.user + used.system) / 1e6 / seconds };
  } finally {
    await client.close();
  }
}

/** fs/getMetadata round trip through the client library, µs. */
async function clientRoundTrip(lib, count = 2000) {
  const client = await lib.ExecServerClient.spawn();
  try {
    for (let i = 0; i < 3000; i++) await client.getMetadata('/tmp'); // past JIT warm-up
    const samples = [];
    for (let i = 0; i < count; i++) {
      const started = process.hrtime.bigint();
      await client.getMetadata('/tmp');
      samples.push(Number(process.hrtime.bigint() - started) / 1000);
    }
    return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
  } finally {
    await client.close();
  }
}

/**
 * A file copied through the client's block streams, each way, against a copy
 * of the same file made with Node's streams in this process: MiB/s and the
 * client's CPU share.
 */
async function clientFileStreams(lib, bytes) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-bench-streams-'));
  const source = path.join(dir, 'source');
  fs.writeFileSync(source, Buffer.alloc(bytes, 0x5a));
  const client = await lib.ExecServerClient.spawn();
  const timed = async (copy) => {
    const cpu = process.cpuUsage();
    const started = process.hrtime.bigint();
    await copy();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const used = process.cpuUsage(cpu);
    return { mibps: bytes / MiB / seconds, clientCpuShare: (used.user + used.system) / 1e6 / seconds };
  };
  try {
    const read = await timed(() => pipeline(client.openRead(source), fs.createWriteStream(path.join(dir, 'read'))));
    const write = await timed(() =>
      pipeline(fs.createReadStream(source, { highWaterMark: MiB }), client.openWrite(path.join(dir, 'written'))),
    );
    const raw = await timed(() =>
      pipeline(fs.createReadStream(source, { highWaterMark: MiB }), fs.createWriteStream(path.join(dir, 'raw'))),
    );
    const exact = ['read', 'written'].every((name) => fs.readFileSync(path.join(dir, name)).equals(fs.readFileSync(source)));
    return { read, write, raw, exact };
  } finally {
    await client.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Time until CommandSessions.exec(['true']) returns (it must return on exit, not at the timeout). */
async function execLatency(lib, executor, count = 100) {
  const sessions = new lib.CommandSessions(executor, { env: { PATH: '/usr/bin:/bin' } });
  const samples = [];
  for (let i = 0; i < 10; i++) await sessions.exec({ input: ['true'], timeoutMs: 10_000 });
  for (let i = 0; i < count; i++) {
    const started = process.hrtime.bigint();
    await sessions.exec({ input: ['true'], timeoutMs: 10_000 });
    samples.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  await sessions.close();
  await executor.close();
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

async function clientWorkloads({ root, runs }) {
  const lib = await import(path.join(root, 'dist/index.js'));
  console.log('\n## client library and executors (this server)');
  const results = [];
  for (let i = 0; i < runs; i++) results.push(await clientThroughput(lib, 256 * MiB));
  results.sort((a, b) => a.mibps - b.mibps);
  const median = results[Math.floor(results.length / 2)];
  console.log(
    `client → async iterator: ${median.mibps.toFixed(1)} MiB/s (256 MiB), client CPU ${(median.clientCpuShare * 100).toFixed(0)}% of one core`,
  );
  const streams = await clientFileStreams(lib, 256 * MiB);
  const share = (result) => `${result.mibps.toFixed(1)} MiB/s, client CPU ${(result.clientCpuShare * 100).toFixed(0)}%`;
  console.log(
    `client openRead → file: ${share(streams.read)}; file → openWrite: ${share(streams.write)} (256 MiB, exact: ${streams.exact}); Node's own copy ${streams.raw.mibps.toFixed(1)} MiB/s`,
  );
  const rtt = await clientRoundTrip(lib);
  console.log(`client fs/getMetadata round trip: p50 ${rtt.p50.toFixed(0)} µs, p99 ${rtt.p99.toFixed(0)} µs`);
  const local = await execLatency(lib, new lib.LocalExecutor());
  const remote = await execLatency(
    lib,
    await lib.createExecutor({ command: process.execPath, args: [path.join(root, 'dist/cli/main.js')] }),
  );
  console.log(`CommandSessions.exec(['true']) local  p50 ${local.p50.toFixed(2)} ms, p99 ${local.p99.toFixed(2)} ms`);
  console.log(
    `CommandSessions.exec(['true']) remote p50 ${remote.p50.toFixed(2)} ms, p99 ${remote.p99.toFixed(2)} ms (remote − local p50: ${(remote.p50 - local.p50).toFixed(2)} ms)`,
  );
}

// Run as its own process by scripts/bench.mjs: `node scripts/bench/client.mjs <runs>`.
await clientWorkloads({
  root: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..'),
  runs: Number(process.argv[2] ?? 3),
});
