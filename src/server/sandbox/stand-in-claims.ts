/**
 * What marks a stand-in's directory on the host (`synthetic-mounts.ts`), so
 * that every server can tell one from a user's directory: its mode, and the
 * claims servers put in it while they use it.
 */
import fs from 'node:fs';

/** Sticky and owner-only: no user's `.git` has this mode. */
export const STAND_IN_MODE = 0o1700;
/** A claim's name: this prefix, then the pid of the server that put it there. */
export const CLAIM_PREFIX = '.exec-server-claim-';

/** An empty directory, or one holding only servers' claims: a stand-in (or a directory to stand in for). */
export function isEmptyButForClaims(directory: string): boolean {
  try {
    return fs.readdirSync(directory).every((name) => name.startsWith(CLAIM_PREFIX));
  } catch {
    return false;
  }
}
