/**
 * The bwrap a process confines its children with: looked up on first need,
 * then kept for the process's life. A `bwrap` that appears later earlier on
 * PATH (one a confined child planted in a directory its policy let it write)
 * is never taken. If the one kept goes away, confinement is unavailable:
 * nothing runs unconfined for want of it.
 */
import { findBwrap, isExecutableFile } from './bwrap.js';

export class BwrapLocator {
  /** The bwrap found for each `--bwrap` given (`''`: none given, PATH searched). */
  private readonly found = new Map<string, string>();

  /** The bwrap to run for `explicit` (or PATH's), or undefined when there is none (now). */
  find(explicit: string | undefined): string | undefined {
    const key = explicit ?? '';
    const kept = this.found.get(key);
    if (kept !== undefined) return isExecutableFile(kept) ? kept : undefined;
    const bwrap = findBwrap(explicit);
    if (bwrap !== undefined) this.found.set(key, bwrap);
    return bwrap;
  }
}
