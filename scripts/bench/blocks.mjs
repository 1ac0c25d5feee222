/**
 * The `blocks` workload: a file through `fs/readBlock` and through
 * `fs/writeBlock` (1 MiB blocks, four in flight, as the client library's
 * streams do), MiB/s, with the server's peak RSS growth during each; and
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
import { MiB, ms } from './stats.mjs';

const BLOCK = MiB;
const IN_FLIGHT = 4;

function rss(pid) {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'latin1'))[1]) * 1024;
  } catch {
    return Number.NaN;
  }
}

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
  const result = await task();
  const seconds = ms(process.hrtime.bigint() - started) / 1000;
  clearInterval(sampler);
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

/** The blocks as received (base64); decoded and hashed after the clock stops, so the figure is the transfer's. */
async function readThrough(driver, file, bytes) {
  const parts = [];
  await driver.request('fs/open', { handleId: 'r', path: pathToFileURL(file).href, mode: 'read' });
  await windowed(
    Math.ceil(bytes / BLOCK),
    (index) => driver.request('fs/readBlock', { handleId: 'r', offset: index * BLOCK, len: BLOCK }),
    (answer) => parts.push(answer.chunkBase64 ?? Buffer.from(answer.chunk, 'latin1')),
  );
  await driver.request('fs/close', { handleId: 'r' });
  return parts;
}

async function writeThrough(driver, file, source) {
  const fd = fs.openSync(source, 'r');
  const block = Buffer.allocUnsafe(BLOCK);
  const size = fs.fstatSync(fd).size;
  await driver.request('fs/open', { handleId: 'w', path: pathToFileURL(file).href, mode: 'replace' });
  await windowed(
    Math.ceil(size / BLOCK),
    (index) => {
      const length = fs.readSync(fd, block, 0, BLOCK, index * BLOCK);
      return driver.callWithPayload(
        'fs/writeBlock',
        { handleId: 'w', offset: index * BLOCK },
        'chunk',
        block.toString('base64', 0, length),
      );
    },
    (answer) => {
      if (answer.error) throw new Error(`fs/writeBlock: ${answer.error.message}`);
    },
  );
  await driver.request('fs/close', { handleId: 'w' });
  fs.closeSync(fd);
}

function digest(base64Parts) {
  const hash = createHash('sha256');
  for (const part of base64Parts) hash.update(Buffer.from(part.toString('latin1'), 'base64'));
  return hash.digest('hex');
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
function sourceFile(dir, bytes) {
  if (source?.bytes === bytes && fs.existsSync(source.file)) return source.file;
  const file = path.join(dir, `blocks-${bytes}`);
  const fd = fs.openSync(file, 'w');
  const block = Buffer.allocUnsafe(BLOCK);
  for (let offset = 0; offset < bytes; offset += BLOCK) {
    for (let i = 0; i < BLOCK; i += 4) block.writeUInt32LE(((offset + i) * 2654435761) >>> 0, i);
    fs.writeSync(fd, block, 0, Math.min(BLOCK, bytes - offset));
  }
  fs.closeSync(fd);
  source = { file, bytes, sha: sha256(file) };
  return file;
}

/** Node's own copy of the file: the raw limit for moving its bytes on this machine. */
export async function rawCopyMiBps(dir, bytes) {
  const from = sourceFile(dir, bytes);
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
    const from = sourceFile(os.tmpdir(), bytes);
    const read = await measured(driver.child.pid, () => readThrough(driver, from, bytes));
    const copy = path.join(dir, 'written');
    const written = await measured(driver.child.pid, () => writeThrough(driver, copy, from));
    return {
      readMiBps: bytes / MiB / read.seconds,
      readRssGrowthMiB: read.growthMiB,
      readCpuMs: read.cpuMs,
      readClientCpuMs: read.clientCpuMs,
      writeMiBps: bytes / MiB / written.seconds,
      writeRssGrowthMiB: written.growthMiB,
      writeCpuMs: written.cpuMs,
      writeClientCpuMs: written.clientCpuMs,
      exact: digest(read.result) === source.sha && sha256(copy) === source.sha,
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
