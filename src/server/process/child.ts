/**
 * What the process manager needs from a running child, whether it runs on
 * pipes or on a PTY. The child reports events through `ChildEvents` in the
 * order it observes them; the manager numbers them.
 */
import type { OutputStream } from '../../protocol/types.js';

/** How a child ended: its exit code, or the number of the signal that killed it. */
export type ExitStatus = { code: number; signal?: undefined } | { code?: undefined; signal: number };

export interface ChildEvents {
  /** `bytes` are lent for the call: the reader reuses their memory after it. */
  output(stream: OutputStream, bytes: Buffer): void;
  /** The child ended; the protocol exit code depends on the generation (see `managed-process.ts`). */
  exit(status: ExitStatus): void;
  /** Every byte has been delivered; nothing more will come. */
  close(): void;
}

export interface SpawnRequest {
  /** argv[0] as the client gave it (the program name or path). */
  program: string;
  /** Absolute path of the program (already resolved and checked). */
  file: string;
  /** argv[0] as the child will see it. */
  argv0: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  pipeStdin: boolean;
  size: { rows: number; cols: number };
  /** On a PTY: answer the terminal's status queries, as the reference does for generation 2 (`terminal-queries.ts`). */
  answerTerminalQueries?: boolean;
}

export interface Child {
  readonly pid: number;
  readonly tty: boolean;
  /** Queues bytes for the child's stdin (or PTY); false if stdin is closed. */
  write(bytes: Buffer): boolean;
  closeStdin(): void;
  resize(rows: number, cols: number): void;
  /** Flow control: stop / restart reading the child's output. */
  pause(): void;
  resume(): void;
  /** Gives up on output still held open by escaped descendants, and closes. */
  forceClose(): void;
  /** SIGKILLs everything the child started (its group; for a PTY its session). */
  killTree(): void;
  /** Sends a signal to the child's process group. */
  signal(signal: NodeJS.Signals): void;
}
