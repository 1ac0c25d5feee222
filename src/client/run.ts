/**
 * `client.run()`: the common case of running one command to completion and
 * collecting its output, with an optional timeout and output cap.
 */
import type { StartOptions } from './options.js';
import type { ProcessSession } from './process-session.js';
import { ClientErrors } from './errors.js';

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
  tty?: boolean;
  /** Written to the process's stdin, which is then closed (pipes) or sent ^D (PTY). */
  stdin?: Uint8Array | string;
  /**
   * How long the run may take: the process is then terminated, and the result (with `timedOut`)
   * comes once it has exited; or, if it had exited already and something it left running holds
   * its output open, at once, with the output that has arrived (its exit code is its own).
   */
  timeoutMs?: number;
  /** Keep at most this many bytes of output (per stream and merged); later bytes are dropped. */
  maxOutputBytes?: number;
}

export interface RunResult {
  exitCode: number | null;
  stdout: Buffer;
  stderr: Buffer;
  /** stdout and stderr (or the PTY) interleaved in seq order. */
  output: Buffer;
  timedOut: boolean;
  truncated: boolean;
}

interface Starter {
  start(options: StartOptions): Promise<ProcessSession>;
}

class Collector {
  private readonly parts: Buffer[] = [];
  private bytes = 0;
  truncated = false;

  constructor(private readonly limit: number) {}

  add(chunk: Buffer): void {
    const room = this.limit - this.bytes;
    if (room <= 0) {
      if (chunk.length > 0) this.truncated = true;
      return;
    }
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (kept.length < chunk.length) this.truncated = true;
    this.parts.push(kept);
    this.bytes += kept.length;
  }

  get buffer(): Buffer {
    return Buffer.concat(this.parts, this.bytes);
  }
}

const EOT = 0x04;

/**
 * Input for a terminal, then its end: ^D ends the input at the start of a
 * line, but after a partial line only hands that line over, so a second one
 * follows it there.
 */
function withEndOfInput(input: Buffer): Buffer {
  const last = input.at(-1);
  const atLineStart = last === undefined || last === 0x0a || last === 0x0d;
  return Buffer.concat([input, Buffer.from(atLineStart ? [EOT] : [EOT, EOT])]);
}

export async function runProcess(client: Starter, argv: string[], options: RunOptions): Promise<RunResult> {
  // Before anything starts: NaN or a negative time would kill the process at once.
  const { timeoutMs } = options;
  if (timeoutMs !== undefined && !(timeoutMs >= 0))
    throw new RangeError(`timeoutMs must be a number of milliseconds >= 0, got ${timeoutMs}`);
  const limit = options.maxOutputBytes ?? Number.POSITIVE_INFINITY;
  const stdout = new Collector(limit);
  const stderr = new Collector(limit);
  const output = new Collector(limit);
  const tty = options.tty ?? false;
  const session = await client.start({ argv, cwd: options.cwd, env: options.env, tty, pipeStdin: options.stdin !== undefined && !tty });
  let timedOut = false;
  let exitCode: number | null | undefined;
  const events = session[Symbol.asyncIterator]();
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          void session.terminate().catch(() => undefined);
          // Exited already, so what holds its output open is something it left running, which
          // terminate no longer reaches (§3.6): the result comes now, with what has arrived.
          if (exitCode !== undefined) void events.return?.();
        }, options.timeoutMs);
  try {
    if (options.stdin !== undefined) {
      if (tty) await session.write(withEndOfInput(Buffer.from(options.stdin)));
      else await session.closeStdin(options.stdin);
    }
    for (let next = await events.next(); !next.done; next = await events.next()) {
      const event = next.value;
      if (event.type === 'output') {
        (event.stream === 'stderr' ? stderr : stdout).add(event.chunk);
        output.add(event.chunk);
      } else if (event.type === 'exited') {
        exitCode = event.exitCode;
        // Timed out and killed: a descendant that left the group may hold its output open for long.
        if (timedOut) break;
      } else if (event.type === 'failed') {
        throw ClientErrors.cutOff(event.message);
      }
    }
    return {
      exitCode: exitCode ?? null,
      stdout: stdout.buffer,
      stderr: stderr.buffer,
      output: output.buffer,
      timedOut,
      truncated: stdout.truncated || stderr.truncated || output.truncated,
    };
  } finally {
    clearTimeout(timer);
    await events.return?.(); // the loop's end, however it ended: the session stops queueing for it
  }
}
