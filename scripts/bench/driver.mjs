/**
 * A lean JSON-RPC driver for benchmarks: starts any exec-server command,
 * over stdio (NDJSON) or WebSocket (`./transport.mjs`), sends requests, and
 * counts `process/output` bytes without JSON.parse (a readline + JSON.parse
 * driver tops out near 300 MiB/s and would measure itself instead of the
 * server).
 */
import { connect } from './transport.mjs';
import {
  base64Length,
  CHUNK_KEY,
  HEAD_BYTES,
  ID_KEY,
  LARGE_ANSWER_BYTES,
  OUTPUT_PREFIX,
  parseLargeAnswer,
  QUOTE,
  NEWLINE,
  PAD,
} from './wire-scan.mjs';

const SERVER_EXITED = 'the server exited';
/** How long after a server's exit `waitFor` still waits for what it wrote before. */
const EXIT_DRAIN_MS = 1000;

export class Driver {
  constructor() {
    this.pending = new Map();
    this.listeners = new Set();
    /** The listeners of `waitFor`, with their rejections. */
    this.waiters = new Map();
    this.outputBytes = new Map();
    this.lastOutputAt = new Map();
    this.nextId = 1;
    this.pendingParts = [];
    /** Sinks taking an answer's `chunk` fragment by fragment (`requestStreamed`), by request id. */
    this.chunkSinks = new Map();
    /** Set to hand `process/output` messages to listeners (otherwise they are only counted). */
    this.parseOutput = false;
    /** Set once the server has exited (`onExit`). */
    this.exited = false;
  }

  /** `transport`: `stdio` (default) or `ws`; `driver.child` is the server process either way. */
  static async start(command, { env, transport = 'stdio' } = {}) {
    const driver = new Driver();
    driver.connection = await connect(transport, command, driver, env ?? process.env);
    driver.child = driver.connection.child;
    // A server that exits answers nothing more: what waits is answered with an error, not left hanging.
    driver.child.once('exit', () => driver.onExit());
    await driver.request('initialize', { clientName: 'bench' });
    driver.notify('initialized', {});
    return driver;
  }

  /**
   * Splits the stdio byte stream into lines. A `process/output` line is
   * counted fragment by fragment, never joined: only its head (for the
   * processId) and its last bytes (for base64 padding) are looked at.
   */
  onData(bytes) {
    let start = 0;
    while (start < bytes.length) {
      const newline = bytes.indexOf(NEWLINE, start);
      const end = newline === -1 ? bytes.length : newline;
      this.onFragment(bytes.subarray(start, end), newline !== -1);
      start = end + 1;
    }
  }

  onFragment(fragment, complete) {
    if (this.streaming !== undefined) return this.streamFragment(fragment, complete);
    if (this.counting === undefined && this.pendingParts.length === 0 && !complete && this.chunkSinks.size > 0) {
      if (this.startStreaming(fragment)) return;
    }
    if (this.counting === undefined && this.pendingParts.length === 0 && !complete) {
      const head = fragment.subarray(0, OUTPUT_PREFIX.length);
      const chunkStart = fragment.indexOf(CHUNK_KEY);
      if (head.equals(OUTPUT_PREFIX) && chunkStart !== -1 && !this.parseOutput) {
        const idStart = fragment.indexOf(ID_KEY) + ID_KEY.length;
        const processId = fragment.toString('utf8', idStart, fragment.indexOf(QUOTE, idStart));
        const dataStart = chunkStart + CHUNK_KEY.length;
        this.counting = { processId, length: fragment.length - dataStart, tail: fragment.subarray(-5) };
        return;
      }
    }
    if (this.counting !== undefined) {
      this.counting.length += fragment.length;
      // The last 5 bytes of the line: two base64 characters and `"}}`.
      if (fragment.length >= 5) this.counting.tail = fragment.subarray(-5);
      else this.counting.tail = Buffer.concat([this.counting.tail, fragment]).subarray(-5);
      if (!complete) return;
      const { processId, length, tail } = this.counting;
      this.counting = undefined;
      // The line ends with `<base64>"}}`: drop the 3 closing bytes, then count padding.
      const dataLength = length - 3;
      const padding = tail[1] === PAD ? (tail[0] === PAD ? 2 : 1) : 0;
      this.outputBytes.set(processId, (this.outputBytes.get(processId) ?? 0) + (dataLength / 4) * 3 - padding);
      this.lastOutputAt.set(processId, Date.now());
      return;
    }
    this.pendingParts.push(fragment);
    if (!complete) return;
    const line = this.pendingParts.length === 1 ? this.pendingParts[0] : Buffer.concat(this.pendingParts);
    this.pendingParts = [];
    if (line.length > 0) this.onLine(line);
  }

  /**
   * The first fragment of an answer whose id has a chunk sink: from here on
   * its `chunk` goes to the sink as it arrives, never joined or kept. Only
   * the exact head `{"id":N,"result":{"chunk":"` is taken this way; any other
   * line is joined and parsed as usual.
   */
  startStreaming(fragment) {
    const key = fragment.subarray(0, HEAD_BYTES).indexOf(CHUNK_KEY);
    if (key < 0) return false;
    const id = Number(/^\{"id":(\d+),"result":\{$/.exec(fragment.toString('latin1', 0, key))?.[1]);
    const sink = this.chunkSinks.get(id);
    if (sink === undefined) return false;
    this.streaming = { id, sink, inChunk: true, tail: [] };
    this.streamFragment(fragment.subarray(key + CHUNK_KEY.length), false);
    return true;
  }

  streamFragment(fragment, complete) {
    const streaming = this.streaming;
    if (streaming.inChunk) {
      const quote = fragment.indexOf(QUOTE);
      streaming.sink(quote === -1 ? fragment : fragment.subarray(0, quote));
      if (quote !== -1) {
        streaming.inChunk = false;
        streaming.tail.push(fragment.subarray(quote));
      }
    } else streaming.tail.push(fragment);
    if (!complete) return;
    this.streaming = undefined;
    // The tail is `","eof":…}}`: the answer without its chunk is the head, an empty chunk, and the tail.
    const tail = Buffer.concat(streaming.tail).toString('utf8');
    this.onMessage(JSON.parse(`{"id":${streaming.id},"result":{"chunk":"${tail}`));
  }

  /** One whole message: a line from stdio, or a WebSocket frame as it arrived. */
  onLine(line) {
    if (line.subarray(0, OUTPUT_PREFIX.length).equals(OUTPUT_PREFIX)) {
      const idStart = line.indexOf(ID_KEY) + ID_KEY.length;
      const processId = line.toString('utf8', idStart, line.indexOf(QUOTE, idStart));
      const chunkStart = line.indexOf(CHUNK_KEY) + CHUNK_KEY.length;
      const chunkEnd = line.indexOf(QUOTE, chunkStart);
      this.outputBytes.set(processId, (this.outputBytes.get(processId) ?? 0) + base64Length(line, chunkStart, chunkEnd));
      this.lastOutputAt.set(processId, Date.now());
      if (!this.parseOutput) return;
    }
    const message = line.length >= LARGE_ANSWER_BYTES ? parseLargeAnswer(line) : JSON.parse(line.toString('utf8'));
    const sink = this.chunkSinks.get(message.id);
    if (sink !== undefined && message.result?.chunkBase64 !== undefined) {
      // A whole answer in one piece (or a head cut short): its chunk in one go.
      sink(message.result.chunkBase64);
      message.result.chunkBase64 = undefined;
      message.result.chunk = '';
    }
    this.onMessage(message);
  }

  onMessage(message) {
    this.chunkSinks.delete(message.id);
    if (message.id !== undefined && message.method === undefined) {
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      waiter?.(message);
    }
    for (const listener of this.listeners) listener(message);
  }

  send(message) {
    this.connection.send([JSON.stringify(message)]);
  }

  /**
   * A request whose answer's base64 `chunk` is handed to `sink(bytes)` piece
   * by piece as it arrives (still base64); the answer resolves with `chunk`
   * empty. Nothing of the chunk is joined, parsed or kept by the driver.
   */
  requestStreamed(method, params, sink) {
    const id = this.nextId++;
    this.chunkSinks.set(id, sink);
    return new Promise((resolve) => {
      this.expect(id, resolve);
      this.send({ id, method, params });
    });
  }

  /**
   * A request whose last param, `key`, is a large base64 payload (bytes):
   * sent as the JSON head, the payload and the JSON tail, so that no
   * JSON.stringify or UTF-8 encoding runs over it.
   */
  callWithPayload(method, params, key, base64) {
    const id = this.nextId++;
    const json = JSON.stringify({ id, method, params: { ...params, [key]: '' } });
    // The payload's key is the last member: the text ends `"<key>":""}}`.
    const tail = json.length - 3;
    return new Promise((resolve) => {
      this.expect(id, resolve);
      this.connection.send([json.slice(0, tail), base64, json.slice(tail)]);
    });
  }

  /** Waits for the answer to `id`, or answers at once with an error if the server has exited. */
  expect(id, resolve) {
    if (this.exited) resolve({ id, error: { code: -32000, message: SERVER_EXITED } });
    else this.pending.set(id, resolve);
  }

  /** The server exited: every request still waiting is answered with an error. */
  onExit() {
    this.exited = true;
    for (const [id, resolve] of this.pending) resolve({ id, error: { code: -32000, message: SERVER_EXITED } });
    this.pending.clear();
    // Notifications written just before the exit may still be in the pipe: waiters get a moment.
    setTimeout(() => {
      for (const [listener, reject] of this.waiters) {
        this.listeners.delete(listener);
        reject(new Error(SERVER_EXITED));
      }
      this.waiters.clear();
    }, EXIT_DRAIN_MS).unref();
  }

  notify(method, params) {
    this.send({ method, params });
  }

  call(method, params) {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.expect(id, resolve);
      this.send({ id, method, params });
    });
  }

  async request(method, params) {
    const response = await this.call(method, params);
    if (response.error) throw new Error(`${method}: ${response.error.message}`);
    return response.result;
  }

  /**
   * Resolves when a message matching `predicate` arrives; rejects once the
   * server has exited and what it wrote before has had its time to arrive
   * (`onExit`), so that a workload whose server died does not wait forever.
   */
  waitFor(predicate) {
    if (this.exited) return Promise.reject(new Error(SERVER_EXITED));
    const waiting = new Promise((resolve, reject) => {
      const listener = (message) => {
        if (!predicate(message)) return;
        this.listeners.delete(listener);
        this.waiters.delete(listener);
        resolve(message);
      };
      this.listeners.add(listener);
      this.waiters.set(listener, reject);
    });
    // Workloads often await it later: its rejection must not count as unhandled meanwhile.
    waiting.catch(() => undefined);
    return waiting;
  }

  waitClosed(processId) {
    return this.waitFor((m) => m.method === 'process/closed' && m.params.processId === processId);
  }

  close() {
    return this.connection.close();
  }
}
