/**
 * OS errors in the reference's words: glibc's strerror text plus
 * ` (os error N)`. Node's own messages (libuv's "no such file or directory,
 * open '/x'") differ, so we map from the error code, in this one table.
 */
import { constants } from 'node:os';
import { ErrorCode, Errors, type ProtocolError } from '../protocol/errors.js';

const STRERROR: Record<string, string> = {
  EPERM: 'Operation not permitted',
  ENOENT: 'No such file or directory',
  EIO: 'Input/output error',
  E2BIG: 'Argument list too long',
  ENOEXEC: 'Exec format error',
  EBADF: 'Bad file descriptor',
  EAGAIN: 'Resource temporarily unavailable',
  ENOMEM: 'Cannot allocate memory',
  EACCES: 'Permission denied',
  EBUSY: 'Device or resource busy',
  EEXIST: 'File exists',
  EXDEV: 'Invalid cross-device link',
  ENODEV: 'No such device',
  ENOTDIR: 'Not a directory',
  EISDIR: 'Is a directory',
  EINVAL: 'Invalid argument',
  ENFILE: 'Too many open files in system',
  EMFILE: 'Too many open files',
  ETXTBSY: 'Text file busy',
  EFBIG: 'File too large',
  ENOSPC: 'No space left on device',
  ESPIPE: 'Illegal seek',
  EROFS: 'Read-only file system',
  EMLINK: 'Too many links',
  EPIPE: 'Broken pipe',
  ENAMETOOLONG: 'File name too long',
  ENOTEMPTY: 'Directory not empty',
  ELOOP: 'Symbolic link loop', // musl's wording, which the reference binaries use
  ENXIO: 'No such device or address',
  ENOTSUP: 'Operation not supported',
  EDQUOT: 'Disk quota exceeded',
};

/** The errno code of a Node system error, e.g. `'ENOENT'`, if it has one. */
export function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('E') ? code : undefined;
}

/** `No such file or directory (os error 2)` for an `ENOENT`. */
function osErrorText(code: string): string {
  const number = (constants.errno as Record<string, number>)[code];
  const text = STRERROR[code] ?? code;
  return number === undefined ? text : `${text} (os error ${number})`;
}

/** An OS error's text as the reference words it (`Permission denied (os error 13)`), for messages inside results. */
export function errorMessage(error: unknown): string {
  const code = errnoCode(error);
  return code === undefined ? String((error as Error)?.message ?? error) : osErrorText(code);
}

/** The fs mapping of §4: ENOENT → −32004, EACCES/EPERM → −32600, other → −32603. */
export function fsError(error: unknown): ProtocolError {
  const code = errnoCode(error);
  if (code === undefined) return Errors.osError(ErrorCode.InternalError, String((error as Error)?.message ?? error));
  const text = osErrorText(code);
  if (code === 'ENOENT') return Errors.osError(ErrorCode.NotFound, text);
  if (code === 'EACCES' || code === 'EPERM') return Errors.osError(ErrorCode.InvalidRequest, text);
  return Errors.osError(ErrorCode.InternalError, text);
}

/** A spawn failure (−32603) in the reference's words. */
export function spawnError(error: unknown): ProtocolError {
  const code = errnoCode(error);
  return Errors.spawnFailed(code === undefined ? String((error as Error)?.message ?? error) : osErrorText(code));
}

/** Throws a system-like error carrying `code`, for checks we make ourselves. */
export function systemError(code: string): Error {
  return Object.assign(new Error(code), { code });
}
