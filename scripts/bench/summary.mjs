/**
 * The benchmark's summary: one table of medians (ours, the peer's, their
 * ratio), then each workload against its raw limit or its floor.
 */
import os from 'node:os';
import { rawCopyMiBps, removeBlockSource } from './blocks.mjs';
import { fmt, MiB } from './stats.mjs';

/** Prints the summary of `ours` (and `peer`'s, when one ran); measures Node's own copy for the block rows. */
export async function printSummary({ ours, peer, transport, rawFile, blockBytes }) {
  console.log(`\n## summary (median; pipe, pty, rtt, rtt-cold, rtt-loaded over ${transport})`);
  // [label, workload, field]
  const rows = [
    ['pipe MiB/s (256 MiB)', 'pipe', 'mibps'],
    ['pty MiB/s (64 MiB)', 'pty', 'mibps'],
    ['rtt p50 µs', 'rtt', 'p50'],
    ['rtt p99 µs', 'rtt', 'p99'],
    ['rtt, first 5000, p50 µs', 'rtt-cold', 'p50'],
    ['rtt, first 5000, p99 µs', 'rtt-cold', 'p99'],
    ['rtt, first 5000, 1st ms', 'rtt-cold', 'firstMs'],
    ['rtt, cores busy, p50 µs', 'rtt-loaded', 'p50'],
    ['rtt, cores busy, p99 µs', 'rtt-loaded', 'p99'],
    ['rtt, cores busy, 1st ms', 'rtt-loaded', 'firstMs'],
    ['rtt, cores busy, worst ms', 'rtt-loaded', 'worstLaterMs'],
    ['spawn p50 ms', 'spawn', 'p50'],
    ['spawn p99 ms', 'spawn', 'p99'],
    ['spawn, 150 MiB kept p50', 'spawn-retained', 'p50'],
    ['100 x 1 MiB s', 'concurrency', 'seconds'],
    ['stalled RSS +MiB', 'stalled', 'growthMiB'],
    ['resumed, peak RSS +MiB', 'stalled', 'flowingPeakMiB'],
    ['stalled, peak RSS MiB', 'stalled', 'stalledRssMiB'],
    ['resumed, peak RSS MiB', 'stalled', 'flowingRssMiB'],
    ['quiet worst ms', 'fairness', 'worstMs'],
    ['fs/readFile MiB/s', 'files', 'readMiBps'],
    ['fs/writeFile MiB/s', 'files', 'writeMiBps'],
    ['fs/writeFile RSS/payload', 'files', 'writeRssGrowthX'],
    ['http rtt p50 µs', 'http', 'p50'],
    ['spawn p50 ms (plain)', 'sandbox', 'plainP50'],
    ['sandboxed spawn p50 ms', 'sandbox', 'sandboxedP50'],
    ['sandboxed spawn p99 ms', 'sandbox', 'sandboxedP99'],
    ['sandbox adds p50 ms', 'sandbox', 'addedP50'],
    ['readBlock MiB/s', 'blocks', 'readMiBps'],
    ['readBlock RSS +MiB', 'blocks', 'readRssGrowthMiB'],
    ['readBlock server CPU ms', 'blocks', 'readCpuMs'],
    ['readBlock client CPU ms', 'blocks', 'readClientCpuMs'],
    ['writeBlock MiB/s', 'blocks', 'writeMiBps'],
    ['writeBlock RSS +MiB', 'blocks', 'writeRssGrowthMiB'],
    ['writeBlock server CPU ms', 'blocks', 'writeCpuMs'],
    ['writeBlock client CPU ms', 'blocks', 'writeClientCpuMs'],
    ['readBlock MiB/s, again', 'blocks', 'readAgainMiBps'],
    ['readBlock again, srv CPU', 'blocks', 'readAgainCpuMs'],
    ['readBlock again, drv CPU', 'blocks', 'readAgainClientCpuMs'],
    ['writeBlock MiB/s, again', 'blocks', 'writeAgainMiBps'],
    ['writeBlock again, srv CPU', 'blocks', 'writeAgainCpuMs'],
    ['fs/copy 20k files ms', 'trees', 'copyMs'],
    ['fs/remove 20k files ms', 'trees', 'removeMs'],
  ];
  console.log(`${'metric'.padEnd(26)}${'ours'.padStart(10)}${'peer'.padStart(10)}${'ours/peer'.padStart(11)}`);
  for (const [label, workload, field] of rows) {
    const a = ours[workload]?.[field];
    const b = peer?.[workload]?.[field];
    const ratio = Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}x` : '';
    console.log(`${label.padEnd(26)}${fmt(a).padStart(10)}${(peer ? fmt(b) : '').padStart(10)}${ratio.padStart(11)}`);
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
  console.log(
    `spawn p50 as a multiple of a bare Node server's (scripts/bench/floor-server.mjs): ${overFloor(ours.spawn)}${peer ? ` (peer: ${overFloor(peer.spawn)})` : ''}; floor ${fmt(spawnFloor, 2)} ms, measured in turn with the servers`,
  );
  for (const [label, workload] of [
    ['rtt', 'rtt'],
    ['rtt, first 5000', 'rtt-cold'],
  ]) {
    const floor = ours[workload];
    if (floor?.floorP50 === undefined) continue;
    const over = (result) => `p50 ${fmt(result?.p50 / floor.floorP50, 2)}, p99 ${fmt(result?.p99 / floor.floorP99, 2)}`;
    console.log(
      `${label} as a multiple of the bare Node server's: ${over(ours[workload])}${peer ? ` (peer: ${over(peer[workload])})` : ''}; floor p50 ${fmt(floor.floorP50)} µs, p99 ${fmt(floor.floorP99)} µs, measured in turn with the servers`,
    );
  }
  console.log(
    `fs/readFile as a fraction of fs.readFile: ${fmt(ours.files?.readMiBps / rawFile.read, 2)}; fs/writeFile of fs.writeFile: ${fmt(ours.files?.writeMiBps / rawFile.write, 2)}`,
  );
  if (ours.trees && !ours.trees.error) {
    const over = (result) => `fs/copy ${fmt(result?.copyVsCp, 2)}, fs/remove ${fmt(result?.removeVsRm, 2)}`;
    console.log(
      `a tree of 20,000 files as a multiple of cp -r and rm -r (${ours.trees.tmpfs ? 'tmpfs' : 'disk'}): ${over(ours.trees)}${peer ? ` (peer: ${over(peer.trees)})` : ''}`,
    );
  }
  if (ours.blocks && !ours.blocks.error) {
    const rawCopy = await rawCopyMiBps(os.tmpdir(), blockBytes);
    const of = (result, key) => fmt(result?.[key] / rawCopy, 2);
    console.log(
      `block I/O (${blockBytes / MiB} MiB) as a fraction of Node's own copy (${fmt(rawCopy)} MiB/s): readBlock ${of(ours.blocks, 'readMiBps')}, writeBlock ${of(ours.blocks, 'writeMiBps')}${peer ? ` (peer: ${of(peer.blocks, 'readMiBps')}, ${of(peer.blocks, 'writeMiBps')})` : ''}; SHA-256 exact: ${ours.blocks.exact}${peer ? ` (peer: ${peer.blocks?.exact})` : ''}`,
    );
    // Server and driver share this machine's cores: the sum of their CPU bounds the rate.
    const cpu = (result, way) => fmt(result?.[`${way}CpuMs`] + result?.[`${way}ClientCpuMs`]);
    console.log(
      `block I/O CPU, server + driver ms: readBlock ${cpu(ours.blocks, 'read')}, writeBlock ${cpu(ours.blocks, 'write')}${peer ? ` (peer: ${cpu(peer.blocks, 'read')}, ${cpu(peer.blocks, 'write')})` : ''}, on ${os.availableParallelism()} cores`,
    );
    const overFloor = (result) =>
      `first pass ${fmt(result?.readMiBps / ours.blocks.floorReadMiBps, 2)}, again ${fmt(result?.readAgainMiBps / ours.blocks.floorReadAgainMiBps, 2)}`;
    console.log(
      `readBlock as a fraction of the bare Node server's (scripts/bench/floor-server.mjs): ${overFloor(ours.blocks)}${peer ? ` (peer: ${overFloor(peer.blocks)})` : ''}; floor ${fmt(ours.blocks.floorReadMiBps)} and ${fmt(ours.blocks.floorReadAgainMiBps)} MiB/s (server CPU ${fmt(ours.blocks.floorReadCpuMs)} ms on the first pass), measured in turn with the servers`,
    );
    removeBlockSource();
  }
}
