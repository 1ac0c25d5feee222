/**
 * A pipe child's stdout or stderr, as the process table reads it.
 *
 * Node's own stream reads allocate a fresh 64 KiB buffer per read. Under a
 * flood those are garbage at once (the chunk is encoded and sent), but V8
 * frees them only when it collects, and it waits for tens of MiB of them
 * (npm run bench -- --only stalled: the peak while flowing). So our pipes
 * are read the way the PTY is: every read lands in one shared buffer and is
 * copied out at once, a nearly full read into a slab of the runtime's pool
 * (given back when retention evicts the chunk: `OutputLog`), any other into a
 * buffer of its own size: retention counts bytes of output, and a slab holding
 * a short read would pin more memory than it counts.
 */
import net, { type Socket } from 'node:net';
import type { BufferPool } from '../../transport/buffer-pool.js';

/** The slab size of the output pool, and the most one read returns. */
export const OUTPUT_SLAB_BYTES = 64 * 1024;
/** Reads from this size on are copied into a slab (which pins at most a third more than it holds). */
const SLAB_FROM_BYTES = 48 * 1024;

/** Every read of every pipe and PTY lands here first, and is copied out before the next. */
export const READ_BUFFER = Buffer.allocUnsafe(OUTPUT_SLAB_BYTES);

/** The reading end of a child's output pipe. */
export interface ChildOutput {
  /** Hands each chunk read to `listener`, which may keep it; call once. */
  onData(listener: (bytes: Buffer) => void): void;
  pause(): void;
  resume(): void;
  destroy(): void;
  /** Resolves once the pipe is closed (the child and its descendants let go, or `destroy`). */
  readonly closed: Promise<void>;
}

/** `bytes` (a view of a shared buffer) copied into memory of its own, a pooled slab if large. */
function copyOut(bytes: Buffer, slabs: BufferPool): Buffer {
  if (bytes.length < SLAB_FROM_BYTES) return Buffer.from(bytes);
  const copy = slabs.take(bytes.length);
  bytes.copy(copy);
  return copy;
}

/**
 * Resolves once the socket is closed. A read error (EIO) ends the output as
 * EOF would: 'close' follows it, and unheard it would crash the server.
 */
function closedOf(socket: Socket): Promise<void> {
  socket.on('error', () => undefined);
  return new Promise((resolve) => socket.once('close', () => resolve()));
}

/** A socket Node made for the child (no pipe pool): read as a stream, each chunk its own buffer. */
export class SocketOutput implements ChildOutput {
  readonly closed: Promise<void>;

  constructor(protected readonly socket: Socket) {
    this.closed = closedOf(socket);
  }

  onData(listener: (bytes: Buffer) => void): void {
    this.socket.on('data', listener);
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Our end of a pipe, by descriptor (non-blocking), read through the shared buffer. */
export class OutputPipe extends SocketOutput {
  private listener: ((bytes: Buffer) => void) | undefined;
  /** Reads start at once; what arrives before `onData` waits here. */
  private early: Buffer[] = [];

  constructor(fd: number, slabs: BufferPool) {
    // Reads arrive on later turns of the loop, once this object is complete.
    const route: { to?: (bytes: Buffer) => void } = {};
    const onread = { buffer: READ_BUFFER, callback: (length: number) => route.to?.(copyOut(READ_BUFFER.subarray(0, length), slabs)) };
    // `onread` is a constructor option since Node 12; @types/node lists it only for connect().
    super(new net.Socket({ fd, readable: true, writable: false, onread } as net.SocketConstructorOpts));
    route.to = (bytes) => this.deliver(bytes);
  }

  override onData(listener: (bytes: Buffer) => void): void {
    this.listener = listener;
    const early = this.early;
    this.early = [];
    for (const bytes of early) listener(bytes);
  }

  private deliver(bytes: Buffer): void {
    if (this.listener) this.listener(bytes);
    else this.early.push(bytes);
  }
}
