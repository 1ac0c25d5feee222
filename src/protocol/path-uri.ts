/**
 * Paths as `file://` URIs (generation 2) or native absolute paths
 * (generation 1), both accepted wherever a path goes. Node's `url` module
 * does the percent-encoding both ways.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Errors } from './errors.js';

export const isFileUri = (value: string): boolean => value.startsWith('file:');

/**
 * The native path of a `file://` URI. A URI with a host (`file://relative/x`)
 * is refused as the reference refuses it (−32600); an unparsable one is −32602.
 */
export function fileUriToPath(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw Errors.invalidUri('relative URL without a base');
  }
  if (url.hostname !== '' && url.hostname !== 'localhost') throw Errors.pathInvalidOnPlatform(value);
  try {
    // Normalized as the reference's URI parsing does (no trailing slash; `..` is resolved by URL already).
    return nativePath(fileURLToPath(url));
  } catch (error) {
    throw Errors.invalidUri((error as Error).message);
  }
}

/**
 * A native absolute path normalized lexically, as the reference's
 * `AbsolutePathBuf` does: `..` drops the previous component even after a
 * symlink, `.` and the trailing `/` go (`/a/f.txt/` names the file `f.txt`).
 */
export const nativePath = (value: string): string => path.posix.resolve(value);

export const pathToFileUri = (native: string): string => pathToFileURL(native).href;

/** A path as the client wrote it: the native form, and whether it came as a URI (answers use the same form). */
export interface ClientPath {
  native: string;
  uri: boolean;
}

/** The path in the form the client used for `like`. */
export const sameFormAs = (like: ClientPath, native: string): string => (like.uri ? pathToFileUri(native) : native);
