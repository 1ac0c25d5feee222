/**
 * The filesystem methods (PROTOCOL.md §4, EXT-CANON) over node:fs/promises.
 * Paths arrive absolute and unnormalized (checked by the schemas); OS errors
 * become protocol errors through `fsError`, one errno table for all.
 */
import { constants, type Dirent, lstat as lstatCallback, stat as statCallback, type Stats } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Base64Decoder } from '../../protocol/base64.js';
import { Errors, ProtocolError } from '../../protocol/errors.js';
import type { FsCanonicalizeResult, FsDirectoryEntry, FsMetadataResult, FsReadDirectoryResult } from '../../protocol/types.js';
import { Base64Payload } from '../../protocol/base64-payload.js';
import type { AnswerBudget } from '../answer-budget.js';
import { errnoCode, fsError, systemError } from '../os-error.js';
import { removeTree } from './remove-tree.js';

const READ_FILE_LIMIT = 536_870_912;
export type Empty = Record<string, never>;

/** An OS error in the protocol's terms; any other error (a `ProtocolError` among them) as it is. */
function asProtocolError(error: unknown): unknown {
  return error instanceof ProtocolError || errnoCode(error) === undefined ? error : fsError(error);
}

/** Runs an fs operation, turning OS errors into protocol errors. */
export async function mapped<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw asProtocolError(error);
  }
}

/**
 * `directoryAsNotAFile`: generation 2 refuses a directory with −32600 `path …
 * is not a file`, generation 1 with EISDIR. Generation 2 refuses any other
 * file that is not a regular one too (a device, a FIFO), as the reference
 * does; generation 1 refuses a FIFO or a socket, which would wait for a
 * writer for ever. The open does not wait for one either (O_NONBLOCK): a
 * FIFO's open blocks a thread of the pool until then.
 */
export function readFile(file: string, budget: AnswerBudget, directoryAsNotAFile = false): Promise<{ dataBase64: Base64Payload }> {
  return mapped(async () => {
    const handle = await fs.open(file, constants.O_RDONLY | constants.O_NONBLOCK);
    let giveBack: (() => void) | undefined;
    try {
      const stat = await handle.stat();
      if (stat.isDirectory()) throw directoryAsNotAFile ? Errors.notAFile(file) : systemError('EISDIR');
      if (!stat.isFile() && (directoryAsNotAFile || waitsForOtherEnd(stat))) throw Errors.notAFile(file);
      if (stat.size > READ_FILE_LIMIT) throw Errors.fileTooLarge(READ_FILE_LIMIT);
      giveBack = await budget.reserve(stat.size);
      const payload = new Base64Payload(await readCapped(handle, stat.size), giveBack);
      giveBack = undefined; // the line writer gives it back once the answer is sent
      return { dataBase64: payload };
    } finally {
      giveBack?.();
      await handle.close();
    }
  });
}

/** How much a read past the size a file reports asks for at a time. */
const EXTRA_READ_BYTES = 8 * 1024 * 1024;

/**
 * Reads to EOF, but never past the limit: /proc files report size 0, and a
 * device like /dev/zero never ends. A file that goes on past its size is read
 * in pieces joined at the end, so that each byte is written to memory once
 * (`fs.test.ts` reads 512 MiB of /dev/zero before refusing it).
 */
async function readCapped(handle: fs.FileHandle, sizeHint: number): Promise<Buffer> {
  const pieces: Buffer[] = [];
  let total = 0;
  // The size it reports and one byte more, to see that it ends there (64 KiB at least: /proc files report 0).
  let want = Math.max(Math.min(sizeHint, READ_FILE_LIMIT) + 1, 64 * 1024);
  for (;;) {
    const piece = Buffer.allocUnsafe(want);
    let length = 0;
    while (length < piece.length) {
      const { bytesRead } = await handle.read(piece, length, piece.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    total += length;
    if (total > READ_FILE_LIMIT) throw Errors.fileTooLarge(READ_FILE_LIMIT);
    pieces.push(piece.subarray(0, length));
    if (length < piece.length) break;
    want = Math.min(EXTRA_READ_BYTES, READ_FILE_LIMIT + 1 - total);
  }
  return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, total);
}

/** A FIFO or a socket: its reads and writes wait for whoever is at the other end. */
export const waitsForOtherEnd = (stat: Stats): boolean => stat.isFIFO() || stat.isSocket();

const WRITE_NOW = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NONBLOCK;

export async function writeFile(file: string, dataBase64: string, decodeBase64: Base64Decoder): Promise<Empty> {
  const decoded = decodeBase64(dataBase64);
  if (!decoded.ok) throw Errors.writeFileBase64(decoded.error);
  await mapped(async () => {
    // Not waiting for a FIFO's reader (O_NONBLOCK): that open would hold a thread of the pool, and
    // keep the server from exiting, for as long as nobody reads. Such a target is refused.
    const handle = await fs.open(file, WRITE_NOW);
    try {
      const stat = await handle.stat();
      if (waitsForOtherEnd(stat)) throw Errors.notAFile(file);
      await handle.writeFile(decoded.bytes);
    } finally {
      await handle.close();
    }
  });
  return {};
}

/**
 * Creates or truncates a file (what `fs/open` mode replace does first); its
 * identity, to be checked when it is reopened. A FIFO nobody reads fails at
 * once (ENXIO), as the unconfined open does, instead of waiting for a reader.
 */
export async function truncate(file: string): Promise<{ dev: number; ino: number }> {
  return mapped(async () => {
    const { O_WRONLY, O_CREAT, O_TRUNC, O_NONBLOCK } = constants;
    const handle = await fs.open(file, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK, 0o666);
    try {
      const { dev, ino } = await handle.stat();
      return { dev, ino };
    } finally {
      await handle.close();
    }
  });
}

export async function createDirectory(dir: string, recursive: boolean): Promise<Empty> {
  await mapped(() => (recursive ? createDirectoryAll(dir) : fs.mkdir(dir)));
  return {};
}

const isDirectory = (dir: string): Promise<boolean> =>
  fs.stat(dir).then(
    (stat) => stat.isDirectory(),
    () => false,
  );

/**
 * `mkdir -p` as the reference's `create_dir_all` does it: make the directory;
 * if that says ENOENT, make its parent the same way and try once more; an
 * error for a path that is a directory by then is success. Node's own
 * recursive mkdir retries without end where a parent exists but the child
 * cannot be made (`/proc/self/x` hangs it), and says ENOENT where the real
 * error is another (a read-only file system, in a sandbox).
 */
async function createDirectoryAll(dir: string): Promise<void> {
  try {
    return await fs.mkdir(dir);
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') {
      if (await isDirectory(dir)) return;
      throw error;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw error;
    await createDirectoryAll(parent);
  }
  try {
    await fs.mkdir(dir);
  } catch (error) {
    if (!(await isDirectory(dir))) throw error;
  }
}

/**
 * `stat`/`lstat` through Node's callback API: `fs/promises` costs more per
 * call (round-trip tail: `npm run bench -- --only rtt`), and metadata
 * probes are the most frequent fs call a client makes.
 */
function statOf(file: string, follow: boolean): Promise<Stats> {
  return new Promise((resolve, reject) =>
    (follow ? statCallback : lstatCallback)(file, (error, stats) => (error ? reject(error) : resolve(stats))),
  );
}

/** `withSize`: generation 2's `size` member (the target's size for a symlink). */
export async function getMetadata(file: string, withSize: boolean): Promise<FsMetadataResult> {
  // One async layer, not `mapped`'s two: this is the round trip `npm run bench -- --only rtt` measures.
  let link: Stats;
  let target: Stats;
  try {
    link = await statOf(file, false);
    target = link.isSymbolicLink() ? await statOf(file, true) : link;
  } catch (error) {
    throw asProtocolError(error);
  }
  const result: FsMetadataResult = {
    isDirectory: target.isDirectory(),
    isFile: target.isFile(),
    isSymlink: link.isSymbolicLink(),
    // Not Math.max: a filesystem without birth times must give 0, never NaN.
    // biome-ignore lint/complexity/useMathMinMax: NaN must map to 0
    createdAtMs: Math.trunc(target.birthtimeMs) > 0 ? Math.trunc(target.birthtimeMs) : 0,
    modifiedAtMs: Math.trunc(target.mtimeMs),
  };
  if (withSize) result.size = target.size;
  return result;
}

/** Codex 0.169 answers no more entries than this (generation 1's reference has no bound). */
const READ_DIRECTORY_MAX_ENTRIES = 50_000;

/** `bounded`: refuse a listing over `READ_DIRECTORY_MAX_ENTRIES`, as generation 2's reference does. */
export function readDirectory(dir: string, bounded = false): Promise<FsReadDirectoryResult> {
  return mapped(async () => {
    const dirents = await direntsInOsOrder(dir);
    const entries: FsDirectoryEntry[] = [];
    for (const dirent of dirents) {
      // A name that is not UTF-8 is shown with U+FFFD, as the reference shows it, and reached by its bytes.
      const fileName = dirent.name.toString();
      if (dirent.isDirectory() || dirent.isFile()) {
        entries.push({ fileName, isDirectory: dirent.isDirectory(), isFile: dirent.isFile() });
      } else if (dirent.isSymbolicLink() || isUnknownType(dirent)) {
        // Types follow links; entries whose type cannot be resolved are omitted (§4, Q8).
        const stat = await fs.stat(childPath(dir, dirent.name)).catch(() => undefined);
        if (stat) entries.push({ fileName, isDirectory: stat.isDirectory(), isFile: stat.isFile() });
      } else {
        entries.push({ fileName, isDirectory: false, isFile: false });
      }
    }
    if (bounded && entries.length > READ_DIRECTORY_MAX_ENTRIES)
      throw Errors.readDirectoryTooLarge(entries.length, READ_DIRECTORY_MAX_ENTRIES);
    return { entries };
  });
}

/**
 * A directory's entries in the order the OS lists them, as the reference
 * lists and copies them (`fs.readdir` sorts them: libuv's scandir does),
 * their names as bytes: not every name is UTF-8.
 */
export async function direntsInOsOrder(dir: string | Buffer): Promise<Dirent<Buffer>[]> {
  const dirents: Dirent<Buffer>[] = [];
  const listing = await fs.opendir(dir, { bufferSize: 128, encoding: 'buffer' as BufferEncoding });
  for await (const dirent of listing as unknown as AsyncIterable<Dirent<Buffer>>) dirents.push(dirent);
  return dirents;
}

/** `dir`'s entry `name`, as bytes. */
export const childPath = (dir: string | Buffer, name: Buffer): Buffer => Buffer.concat([Buffer.from(dir), Buffer.from('/'), name]);

/** A readdir entry whose type the file system did not give (DT_UNKNOWN): only a stat tells. */
export function isUnknownType(dirent: Dirent<Buffer> | Dirent): boolean {
  return (
    !dirent.isBlockDevice() &&
    !dirent.isCharacterDevice() &&
    !dirent.isFIFO() &&
    !dirent.isSocket() &&
    !dirent.isSymbolicLink() &&
    !dirent.isDirectory() &&
    !dirent.isFile()
  );
}

export async function remove(target: string, recursive: boolean, force: boolean): Promise<Empty> {
  await mapped(async () => {
    let stat: Stats;
    try {
      stat = await fs.lstat(target);
    } catch (error) {
      if (force && (error as { code?: string }).code === 'ENOENT') return;
      throw error;
    }
    if (!stat.isDirectory()) return fs.unlink(target); // a symlink goes, never its target
    if (recursive) return removeTree(target);
    return fs.rmdir(target);
  });
  return {};
}

/** realpath(3) as the reference's (musl's): a path of PATH_MAX bytes or more is ENAMETOOLONG before anything is looked up. */
const PATH_MAX = 4096;

export function canonicalize(file: string): Promise<FsCanonicalizeResult> {
  return mapped(async () => {
    if (Buffer.byteLength(file) >= PATH_MAX) throw systemError('ENAMETOOLONG');
    return { path: await fs.realpath(file) };
  });
}
