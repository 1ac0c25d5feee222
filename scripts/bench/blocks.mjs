/**
 * The `blocks` workload: a file through `fs/readBlock` and through
 * `fs/writeBlock` (1 MiB blocks, four in flight, as the client library's
 * streams do), MiB/s, with the server's peak RSS growth during each, on a
 * fresh server and then once more in the same server; and
 * Node's own copy of the same file (a read stream piped to a write stream)
 * as the raw limit. Paths go as `file://` URIs, which both generations of
 * server here take. `--block-mib N` sets the file size (default 256).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import { Driver } from './driver.mjs';
import { MiB, ms, rss } from './stats.mjs';

const BLOCK = MiB;
const IN_FLIGHT = 4;

/** The server's CPU time so far (user + system), ms. */
function cpuMs(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 10 ms (USER_HZ)
  } catch {
    return Number.NaN;
  }
}

/**
 * Runs `task` while sampling the server's RSS; resolves with its result,
 * seconds, peak growth in MiB, and the CPU ms of the server and of this
 * client (to see which of the two sets the rate).
 */
async function measured(pid, task) {
  const before = rss(pid);
  const cpuBefore = cpuMs(pid);
  const clientBefore = process.cpuUsage();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rss(pid))), 10);
  const started = process.hrtime.bigint();
  let result;
  try {
    result = await task();
  } finally {
    clearInterval(sampler); // also when the task failed: a live interval keeps the bench from exiting
  }
  const seconds = ms(process.hrtime.bigint() - started) / 1000;
  const client = process.cpuUsage(clientBefore);
  return {
    result,
    seconds,
    growthMiB: (Math.max(peak, rss(pid)) - before) / MiB,
    cpuMs: cpuMs(pid) - cpuBefore,
    clientCpuMs: (client.user + client.system) / 1000,
  };
}

/** Requests `count` blocks with at most IN_FLIGHT outstanding, handing each answer to `take` in order. */
async function windowed(count, request, take) {
  const inFlight = [];
  for (let index = 0; index < count || inFlight.length > 0; ) {
    while (index < count && inFlight.length < IN_FLIGHT) inFlight.push(request(index++));
    take(await inFlight.shift());
  }
}

/**
 * Reads the file block by block. Each answer's base64 is compared, piece by
 * piece as it arrives, with the canonical base64 of that block of the file
 * (made before the clock starts): the driver keeps nothing and decodes
 * nothing, so the figure is the server's rate and not the driver's. Resolves
 * with whether every byte was exact.
 */
async function readThrough(driver, file, expected) {
  let exact = true;
  await driver.request('fs/open', { handleId: 'r', path: pathToFileURL(file).href, mode: 'read' });
  await windowed(
    expected.length,
    (index) => {
      let at = 0;
      const answer = driver.requestStreamed('fs/readBlock', { handleId: 'r', offset: index * BLOCK, len: BLOCK }, (piece) => {
        if (!piece.equals(expected[index].subarray(at, at + piece.length))) exact = false;
        at += piece.length;
      });
      return answer.then((message) => ({ message, complete: at === expected[index].length }));
    },
    ({ message, complete }) => {
      if (message.error) throw new Error(`fs/readBlock: ${message.error.message}`);
      if (!complete) exact = false;
    },
  );
  await driver.request('fs/close', { handleId: 'r' });
  return exact;
}

/** Writes the file block by block from its base64 blocks made before the clock started. */
async function writeThrough(driver, file, blocks) {
  await driver.request('fs/open', { handleId: 'w', path: pathToFileURL(file).href, mode: 'replace' });
  await windowed(
    blocks.length,
    (index) => driver.callWithPayload('fs/writeBlock', { handleId: 'w', offset: index * BLOCK }, 'chunk', blocks[index]),
    (answer) => {
      if (answer.error) throw new Error(`fs/writeBlock: ${answer.error.message}`);
    },
  );
  await driver.request('fs/close', { handleId: 'w' });
}

function sha256(file) {
  const hash = createHash('sha256');
  const fd = fs.openSync(file, 'r');
  const block = Buffer.allocUnsafe(BLOCK);
  for (let read = fs.readSync(fd, block); read > 0; read = fs.readSync(fd, block)) hash.update(block.subarray(0, read));
  fs.closeSync(fd);
  return hash.digest('hex');
}

let source;
/** The source file, its SHA-256 and the canonical base64 of each of its blocks. */
function sourceFile(dir, bytes) {
  if (source?.bytes === bytes && fs.existsSync(source.file)) return source;
  const file = path.join(dir, `blocks-${bytes}`);
  const fd = fs.openSync(file, 'w');
  const block = Buffer.allocUnsafe(BLOCK);
  const base64Blocks = [];
  for (let offset = 0; offset < bytes; offset += BLOCK) {
    for (let i = 0; i < BLOCK; i += 4) block.writeUInt32LE(((offset + i) * 2654435761) >>> 0, i);
    const length = Math.min(BLOCK, bytes - offset);
    fs.writeSync(fd, block, 0, length);
    base64Blocks.push(Buffer.from(block.toString('base64', 0, length), 'latin1'));
  }
  fs.closeSync(fd);
  source = { file, bytes, sha: sha256(file), base64Blocks };
  return source;
}

/** Node's own copy of the file: the raw limit for moving its bytes on this machine. */
export async function rawCopyMiBps(dir, bytes) {
  const from = sourceFile(dir, bytes).file;
  const to = path.join(dir, 'raw-copy');
  const started = process.hrtime.bigint();
  await pipeline(fs.createReadStream(from, { highWaterMark: BLOCK }), fs.createWriteStream(to, { highWaterMark: BLOCK }));
  const seconds = ms(process.hrtime.bigint() - started) / 1000;
  fs.rmSync(to, { force: true });
  return bytes / MiB / seconds;
}

export async function blockTransfer(command, bytes = 256 * MiB) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-bench-blocks-'));
  const driver = await Driver.start(command);
  try {
    const { file, base64Blocks } = sourceFile(os.tmpdir(), bytes);
    const copy = path.join(dir, 'written');
    const read = await measured(driver.child.pid, () => readThrough(driver, file, base64Blocks));
    const written = await measured(driver.child.pid, () => writeThrough(driver, copy, base64Blocks));
    const exact = read.result && sha256(copy) === source.sha;
    // The same again in the same server: the rate once its code is compiled and its heap grown.
    const readAgain = await measured(driver.child.pid, () => readThrough(driver, file, base64Blocks));
    const writtenAgain = await measured(driver.child.pid, () => writeThrough(driver, copy, base64Blocks));
    return {
      readMiBps: bytes / MiB / read.seconds,
      readRssGrowthMiB: read.growthMiB,
      readCpuMs: read.cpuMs,
      readClientCpuMs: read.clientCpuMs,
      writeMiBps: bytes / MiB / written.seconds,
      writeRssGrowthMiB: written.growthMiB,
      writeCpuMs: written.cpuMs,
      writeClientCpuMs: written.clientCpuMs,
      readAgainMiBps: bytes / MiB / readAgain.seconds,
      readAgainCpuMs: readAgain.cpuMs,
      readAgainClientCpuMs: readAgain.clientCpuMs,
      writeAgainMiBps: bytes / MiB / writtenAgain.seconds,
      writeAgainCpuMs: writtenAgain.cpuMs,
      exact: exact && readAgain.result && sha256(copy) === source.sha,
    };
  } finally {
    await driver.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Removes the source file made for the workload. */
export function removeBlockSource() {
  if (source) fs.rmSync(source.file, { force: true });
  source = undefined;
}
