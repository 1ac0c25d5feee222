/**
 * A pipe child's stdout or stderr, as the process table reads it.
 *
 * Node's own stream reads allocate a fresh 64 KiB buffer per read. Under a
 * flood those are garbage at once (the chunk is encoded and sent), but V8
 * frees them only when it collects, and it waits for tens of MiB of them
 * (npm run bench -- --only stalled: the peak while flowing). So our pipes
 * are read the way the PTY is: every read lands in one shared buffer, lent
 * to the listener for the call (the output log keeps a copy, packed).
 */
import net, { type Socket } from 'node:net';

/** The slab size of the output pool, and the most one read returns. */
export const OUTPUT_SLAB_BYTES = 64 * 1024;

/** Every read of every pipe and PTY lands here first, and is copied out before the next. */
export const READ_BUFFER = Buffer.allocUnsafe(OUTPUT_SLAB_BYTES);

/** The reading end of a child's output pipe. */
export interface ChildOutput {
  /** Lends each chunk read to `listener` for the call (its memory may be reused after); call once. */
  onData(listener: (bytes: Buffer) => void): void;
  pause(): void;
  resume(): void;
  destroy(): void;
  /** Resolves once the pipe is closed (the child and its descendants let go, or `destroy`). */
  readonly closed: Promise<void>;
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

  constructor(fd: number) {
    // Reads arrive on later turns of the loop, once this object is complete.
    const route: { to?: (bytes: Buffer) => void } = {};
    const onread = { buffer: READ_BUFFER, callback: (length: number) => route.to?.(READ_BUFFER.subarray(0, length)) };
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
    else this.early.push(Buffer.from(bytes)); // kept past the call: a copy of its own
  }
}
