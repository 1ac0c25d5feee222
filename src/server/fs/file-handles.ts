/**
 * `fs/open`, `fs/readBlock`, `fs/writeBlock`, `fs/close` (generation 2): a
 * connection's open files, so that a file of any size moves in blocks of at
 * most 1 MiB instead of one huge line. As in Codex 0.169's exec-server:
 * `replace` truncates the file in place at open and every block lands at
 * once (positional writes; a gap reads back as zeros); `eof` is true when a
 * read returns fewer bytes than asked; a failed read drops its handle, a
 * failed write does not; at most 128 handles per connection.
 */
import type { FileHandle } from 'node:fs/promises';
import fs from 'node:fs/promises';
import { Base64Payload } from '../../protocol/base64-payload.js';
import { BlockPool } from '../../protocol/block-pool.js';
import { MAX_BLOCK_BYTES } from '../../protocol/defaults.js';
import { Errors, ProtocolError } from '../../protocol/errors.js';
import { fsError, systemError } from '../os-error.js';

const MAX_HANDLES = 128;
/** The largest offset + length a write may reach (i64::MAX, as the reference's file offsets). */
const MAX_FILE_OFFSET = 2n ** 63n - 1n;

/** `truncated`: a file already created or truncated (by the confined helper), opened for writing as it is. */
export type OpenMode = 'read' | 'replace' | 'truncated';

/** Rethrows an OS error in the protocol's terms. */
function osFailure(error: unknown): never {
  throw error instanceof ProtocolError ? error : fsError(error);
}

/** An open that `closeAll` overtook: nobody is left to answer or to close the file. */
const connectionEnded = () => Errors.internal('the connection ended while the file was being opened');

/** Codex 0.169 refuses longer ids (UTF-8 bytes). */
const MAX_HANDLE_ID_BYTES = 32;

export class FileHandles {
  private readonly open = new Map<string, FileHandle>();
  /** Ids whose open is under way: they count against the limit and cannot be opened twice. */
  private readonly opening = new Set<string>();
  /** Set by `closeAll`: the connection is ending, and an open still under way must not outlive it. */
  private closed = false;
  /** Full-size read buffers back from the line writer, reused so block reads make no garbage. */
  private readonly blocks = new BlockPool();

  /** Throws the reference's −32600 when `handleId` is too long or taken, or no handle is left (−32603 once the connection ended). */
  private checkOpenable(handleId: string): void {
    if (this.closed) throw connectionEnded();
    if (Buffer.byteLength(handleId) > MAX_HANDLE_ID_BYTES) throw Errors.handleIdTooLong(MAX_HANDLE_ID_BYTES);
    if (this.open.has(handleId) || this.opening.has(handleId)) throw Errors.handleExists(handleId);
    if (this.open.size + this.opening.size >= MAX_HANDLES) throw Errors.tooManyHandles(MAX_HANDLES);
  }

  /**
   * Opens `native` under `handleId`. `truncate` (mode `truncated`) runs once
   * the id is reserved, so that a refused open never touches the file: the
   * confined helper truncates it and answers the identity it had in the
   * sandbox. A different file at the path now (a swapped symlink, a path the
   * sandbox sees elsewhere) is refused rather than written.
   */
  async openFile(
    handleId: string,
    native: string,
    mode: OpenMode,
    truncate?: () => Promise<{ dev: number; ino: number }>,
  ): Promise<{ handleId: string }> {
    this.checkOpenable(handleId);
    this.opening.add(handleId); // reserved across the awaits below
    let file: FileHandle | undefined;
    try {
      const expected = await truncate?.();
      // Only regular files, as the reference. Opened without waiting (O_NONBLOCK): a FIFO's open
      // would wait for its other end, holding a thread of the pool; a write end with no reader fails.
      const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_NONBLOCK } = fs.constants;
      const flags = mode === 'read' ? O_RDONLY : mode === 'replace' ? O_WRONLY | O_CREAT | O_TRUNC : O_RDWR;
      file = await fs.open(native, flags | O_NONBLOCK).catch(osFailure);
      const stat = await file.stat().catch(osFailure);
      if (!stat.isFile()) throw Errors.notAFile(native);
      if (expected && (stat.dev !== expected.dev || stat.ino !== expected.ino)) throw Errors.readOnlyFileSystem();
      if (this.closed) throw connectionEnded();
      this.open.set(handleId, file);
      return { handleId };
    } catch (error) {
      await file?.close().catch(() => undefined);
      throw error;
    } finally {
      this.opening.delete(handleId);
    }
  }

  async read(handleId: string, offset: number, length: number): Promise<{ chunk: Base64Payload; eof: boolean }> {
    if (length < 1 || length > MAX_BLOCK_BYTES) throw Errors.readBlockLength(MAX_BLOCK_BYTES);
    const file = this.handle(handleId);
    if (offset > Number.MAX_SAFE_INTEGER) return this.readFarOffset(handleId, file, offset);
    const buffer = length === MAX_BLOCK_BYTES ? this.blocks.take() : Buffer.allocUnsafe(length);
    let filled = 0;
    try {
      while (filled < length) {
        const { bytesRead } = await file.read(buffer, filled, length - filled, offset + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
    } catch (error) {
      await this.readFailed(handleId, file, error);
    }
    const reuse = () => this.blocks.giveBack(buffer);
    if (filled * 2 >= buffer.length) return { chunk: new Base64Payload(buffer.subarray(0, filled), reuse), eof: filled < length };
    // A short read (the end of a file): only what was read is kept. In process (LocalExecutor) the
    // chunk goes to the caller as it is, and a slice would keep the whole block's memory alive.
    const exact = Buffer.from(buffer.subarray(0, filled));
    reuse();
    return { chunk: new Base64Payload(exact), eof: filled < length };
  }

  /**
   * An offset above 2^53 − 1 arrives rounded. In a file no larger than that,
   * any such offset is past the end: `eof`, as the reference answers. From
   * 2^63 on the reference's read fails (EINVAL), and the handle goes as with
   * any failed read. A larger file (sparse, on XFS or btrfs) would be read at
   * the wrong place: refused.
   */
  private async readFarOffset(handleId: string, file: FileHandle, offset: number): Promise<{ chunk: Base64Payload; eof: boolean }> {
    let size = 0;
    try {
      if (offset >= 2 ** 63) throw systemError('EINVAL');
      size = (await file.stat()).size;
    } catch (error) {
      await this.readFailed(handleId, file, error);
    }
    if (size > Number.MAX_SAFE_INTEGER) throw Errors.notExact('offset');
    return { chunk: new Base64Payload(Buffer.alloc(0)), eof: true };
  }

  /** The reference drops a handle whose read failed (unless a new one took the id meanwhile). */
  private async readFailed(handleId: string, file: FileHandle, error: unknown): Promise<never> {
    if (this.open.get(handleId) === file) this.open.delete(handleId);
    await file.close().catch(() => undefined);
    return osFailure(error);
  }

  async write(handleId: string, offset: number, bytes: Buffer): Promise<Record<string, never>> {
    if (bytes.length < 1 || bytes.length > MAX_BLOCK_BYTES) throw Errors.writeBlockLength(MAX_BLOCK_BYTES);
    if (BigInt(offset) + BigInt(bytes.length) > MAX_FILE_OFFSET) throw Errors.writeBlockRange();
    const file = this.handle(handleId);
    // Node writes at the current position when given an inexact one: a rounded offset is refused
    // (after the handle is looked up, as the reference looks it up before it writes).
    if (offset > Number.MAX_SAFE_INTEGER) throw Errors.notExact('offset');
    let written = 0;
    try {
      while (written < bytes.length) {
        written += (await file.write(bytes, written, bytes.length - written, offset + written)).bytesWritten;
      }
    } catch (error) {
      osFailure(error);
    }
    return {};
  }

  /** Always `{}`: closing an unknown or closed handle is not an error. */
  async close(handleId: string): Promise<Record<string, never>> {
    const file = this.open.get(handleId);
    this.open.delete(handleId);
    await file?.close().catch(() => undefined);
    return {};
  }

  /** Closes every handle (the connection is ending). */
  async closeAll(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.open.keys()].map((handleId) => this.close(handleId)));
  }

  private handle(handleId: string): FileHandle {
    const file = this.open.get(handleId);
    if (!file) throw Errors.unknownHandle(handleId);
    return file;
  }
}
