/**
 * A lean NDJSON driver for benchmarks: spawns any stdio exec-server command,
 * sends requests, and counts `process/output` bytes without JSON.parse (a
 * readline + JSON.parse driver tops out near 300 MiB/s and would measure
 * itself instead of the server).
 */
import { spawn } from 'node:child_process';

const OUTPUT_PREFIX = Buffer.from('{"method":"process/output"');
const CHUNK_KEY = Buffer.from('"chunk":"');
const ID_KEY = Buffer.from('"processId":"');
const QUOTE = 0x22;
const NEWLINE = 0x0a;
const PAD = 0x3d;

function base64Length(bytes, start, end) {
  let padding = 0;
  if (bytes[end - 1] === PAD) padding++;
  if (bytes[end - 2] === PAD) padding++;
  return ((end - start) / 4) * 3 - padding;
}

export class Driver {
  constructor(command, { env } = {}) {
    this.child = spawn('/bin/sh', ['-c', `exec ${command}`], { stdio: ['pipe', 'pipe', 'inherit'], env: env ?? process.env });
    this.pending = new Map();
    this.listeners = new Set();
    this.outputBytes = new Map();
    this.lastOutputAt = new Map();
    this.nextId = 1;
    this.pendingParts = [];
    this.child.stdout.on('data', (bytes) => this.onData(bytes));
    this.exited = new Promise((resolve) => this.child.on('exit', resolve));
  }

  static async start(command, options) {
    const driver = new Driver(command, options);
    await driver.request('initialize', { clientName: 'bench' });
    driver.notify('initialized', {});
    return driver;
  }

  /** Splits Buffers into lines without decoding them to strings. */
  onData(bytes) {
    let start = 0;
    let newline;
    while ((newline = bytes.indexOf(NEWLINE, start)) !== -1) {
      let line = bytes.subarray(start, newline);
      if (this.pendingParts.length > 0) {
        this.pendingParts.push(line);
        line = Buffer.concat(this.pendingParts);
        this.pendingParts = [];
      }
      this.onLine(line);
      start = newline + 1;
    }
    if (start < bytes.length) this.pendingParts.push(bytes.subarray(start));
  }

  onLine(line) {
    if (line.subarray(0, OUTPUT_PREFIX.length).equals(OUTPUT_PREFIX)) {
      const idStart = line.indexOf(ID_KEY) + ID_KEY.length;
      const processId = line.toString('utf8', idStart, line.indexOf(QUOTE, idStart));
      const chunkStart = line.indexOf(CHUNK_KEY) + CHUNK_KEY.length;
      const chunkEnd = line.indexOf(QUOTE, chunkStart);
      this.outputBytes.set(processId, (this.outputBytes.get(processId) ?? 0) + base64Length(line, chunkStart, chunkEnd));
      this.lastOutputAt.set(processId, Date.now());
      if (this.listeners.size === 0) return;
    }
    const message = JSON.parse(line.toString('utf8'));
    if (message.id !== undefined && message.method === undefined) {
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      waiter?.(message);
    }
    for (const listener of this.listeners) listener(message);
  }

  send(message) {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  notify(method, params) {
    this.send({ method, params });
  }

  call(method, params) {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.send({ id, method, params });
    });
  }

  async request(method, params) {
    const response = await this.call(method, params);
    if (response.error) throw new Error(`${method}: ${response.error.message}`);
    return response.result;
  }

  /** Resolves when a message matching `predicate` arrives. */
  waitFor(predicate) {
    return new Promise((resolve) => {
      const listener = (message) => {
        if (!predicate(message)) return;
        this.listeners.delete(listener);
        resolve(message);
      };
      this.listeners.add(listener);
    });
  }

  waitClosed(processId) {
    return this.waitFor((m) => m.method === 'process/closed' && m.params.processId === processId);
  }

  async close() {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}
