/**
 * OS errors in the reference's words: the strerror text of musl (the
 * reference binaries are linked with it) plus ` (os error N)`. Node's own
 * messages (libuv's "no such file or directory, open '/x'") and glibc's
 * texts ("File name too long") differ, so we map from the error code, in
 * this one table (musl's src/errno/__strerror.h).
 */
import { constants } from 'node:os';
import { ErrorCode, Errors, type ProtocolError } from '../protocol/errors.js';

const STRERROR: Record<string, string> = {
  EPERM: 'Operation not permitted',
  ENOENT: 'No such file or directory',
  ESRCH: 'No such process',
  EINTR: 'Interrupted system call',
  EIO: 'I/O error',
  ENXIO: 'No such device or address',
  E2BIG: 'Argument list too long',
  ENOEXEC: 'Exec format error',
  EBADF: 'Bad file descriptor',
  ECHILD: 'No child process',
  EAGAIN: 'Resource temporarily unavailable',
  ENOMEM: 'Out of memory',
  EACCES: 'Permission denied',
  EFAULT: 'Bad address',
  EBUSY: 'Resource busy',
  EEXIST: 'File exists',
  EXDEV: 'Cross-device link',
  ENODEV: 'No such device',
  ENOTDIR: 'Not a directory',
  EISDIR: 'Is a directory',
  EINVAL: 'Invalid argument',
  ENFILE: 'Too many open files in system',
  EMFILE: 'No file descriptors available',
  ENOTTY: 'Not a tty',
  ETXTBSY: 'Text file busy',
  EFBIG: 'File too large',
  ENOSPC: 'No space left on device',
  ESPIPE: 'Invalid seek',
  EROFS: 'Read-only file system',
  EMLINK: 'Too many links',
  EPIPE: 'Broken pipe',
  ENAMETOOLONG: 'Filename too long',
  ENOSYS: 'Function not implemented',
  ENOTEMPTY: 'Directory not empty',
  ELOOP: 'Symbolic link loop',
  EOVERFLOW: 'Value too large for data type',
  EILSEQ: 'Illegal byte sequence',
  ENOTSUP: 'Not supported',
  EOPNOTSUPP: 'Not supported',
  ETIMEDOUT: 'Operation timed out',
  ESTALE: 'Stale file handle',
  EDQUOT: 'Quota exceeded',
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

/** The fs mapping of §4: ENOENT → −32004, EACCES/EPERM/EINVAL → −32600, other → −32603. */
export function fsError(error: unknown): ProtocolError {
  const code = errnoCode(error);
  if (code === undefined) return Errors.osError(ErrorCode.InternalError, String((error as Error)?.message ?? error));
  const text = osErrorText(code);
  if (code === 'ENOENT') return Errors.osError(ErrorCode.NotFound, text);
  // The reference answers Rust's PermissionDenied and InvalidInput kinds −32600.
  if (code === 'EACCES' || code === 'EPERM' || code === 'EINVAL') return Errors.osError(ErrorCode.InvalidRequest, text);
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
