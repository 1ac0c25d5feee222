/**
 * Real pipes for children that Node spawns. Node's `stdio: 'pipe'` gives a
 * child socketpairs, and then `echo x > /dev/stdout` fails (ENXIO), `[ -p
 * /dev/stdin ]` is false and /proc shows `socket:` — unlike the reference,
 * whose children get pipe(2). Node cannot make a pipe, so the spawner makes
 * them in batches ahead of need; we open both ends through /proc (our end
 * non-blocking, the child's blocking), hand the child's ends to Node's
 * spawn as plain descriptors, and let the spawner drop its copies.
 */
import fs from 'node:fs';
import type { HeldPipe, Spawner } from './spawner.js';

const { O_RDONLY, O_WRONLY, O_NONBLOCK } = fs.constants;
/** Pipes asked for at a time, and the stock below which more are asked for. */
const BATCH = 48;
const LOW_WATER = 16;

/** One pipe as opened here: the end the server keeps and the end the child gets. */
export interface OpenedPipe {
  ours: number;
  theirs: number;
}

/** The descriptors of a pipe child's stdio: stdin is undefined for /dev/null. */
export interface StdioPipes {
  stdin: OpenedPipe | undefined;
  stdout: OpenedPipe;
  stderr: OpenedPipe;
}

export class PipePool {
  private stock: HeldPipe[] = [];
  private filling: Promise<void> | undefined;

  constructor(readonly spawner: Spawner) {}

  /** Starts making pipes now, so the first start does not wait for them. */
  prefill(): void {
    void this.fill();
  }

  /** Opens stdio pipes for one child; undefined if the spawner cannot make any. */
  async open(pipeStdin: boolean): Promise<StdioPipes | undefined> {
    const needed = pipeStdin ? 3 : 2;
    while (this.stock.length < needed) {
      const before = this.stock.length;
      await this.fill();
      if (this.stock.length === before) return undefined;
    }
    const opened: OpenedPipe[] = [];
    try {
      const stdin = pipeStdin ? this.take('write', opened) : undefined;
      return { stdin, stdout: this.take('read', opened), stderr: this.take('read', opened) };
    } catch (error) {
      for (const pipe of opened) closePipe(pipe);
      // Out of descriptors: so would a socketpair be; the start fails with it (as the reference's).
      const code = (error as { code?: string }).code;
      if (code === 'EMFILE' || code === 'ENFILE') throw error;
      return undefined; // /proc would not open them (hidepid, a sandbox)
    } finally {
      // The child sees EOF on stdin, and we on its output, only once the spawner has closed its copies: now, not batched.
      this.spawner.flushReleases();
      if (this.stock.length < LOW_WATER) void this.fill();
    }
  }

  private take(ourEnd: 'read' | 'write', opened: OpenedPipe[]): OpenedPipe {
    const held = this.stock.shift()!;
    try {
      // The read end first: opening a pipe's write end needs a reader.
      const read = this.spawner.reopen(held.readFd, O_RDONLY | (ourEnd === 'read' ? O_NONBLOCK : 0));
      let write: number;
      try {
        write = this.spawner.reopen(held.writeFd, O_WRONLY | (ourEnd === 'write' ? O_NONBLOCK : 0));
      } catch (error) {
        fs.closeSync(read);
        throw error;
      }
      const pipe = ourEnd === 'read' ? { ours: read, theirs: write } : { ours: write, theirs: read };
      opened.push(pipe);
      return pipe;
    } finally {
      this.spawner.release(held.id);
    }
  }

  private fill(): Promise<void> {
    this.filling ??= this.spawner.makePipes(BATCH).then((pipes) => {
      this.stock.push(...pipes);
      this.filling = undefined;
    });
    return this.filling;
  }
}

function closePipe(pipe: OpenedPipe): void {
  for (const fd of [pipe.ours, pipe.theirs]) {
    try {
      fs.closeSync(fd);
    } catch {
      // already closed
    }
  }
}
