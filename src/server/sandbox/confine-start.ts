/** A process start under its sandbox policy (`process-manager.ts`): bwrap's command, and the stand-ins it holds. */
import { Errors } from '../../protocol/errors.js';
import type { SpawnRequest } from '../process/child.js';
import { confined, findBwrap } from './bwrap.js';
import { confinementOf } from './policy.js';
import type { HeldConfinement, SyntheticMounts } from './synthetic-mounts.js';

export interface ConfineContext {
  mounts: SyntheticMounts;
  /** The bwrap to use (default: `bwrap` on PATH). */
  bwrapPath: string | undefined;
  /** The server's TMPDIR, for a policy's `tmpdir` when the child's environment has none. */
  serverTmpdir: string | undefined;
}

type ConfinedStart = { request: SpawnRequest; held?: HeldConfinement };

/**
 * `request` confined by `sandbox`, its stand-ins held until the child is
 * gone (`held`); as it is, at once, when the policy confines nothing. A
 * start that asks for confinement never runs unconfined: without bwrap it
 * is refused.
 */
export function confineStart(
  request: SpawnRequest,
  sandbox: unknown,
  tty: boolean,
  context: ConfineContext,
): ConfinedStart | Promise<ConfinedStart> {
  const confinement = confinementOf(sandbox, request.env.TMPDIR ?? context.serverTmpdir);
  if (!confinement) return { request };
  const bwrap = findBwrap(context.bwrapPath);
  if (!bwrap) throw Errors.sandboxUnavailable();
  return context.mounts.hold(confinement).then((held) => {
    try {
      return { request: confined(request, held.confinement, bwrap, tty), held };
    } catch (error) {
      held.release(); // its stand-ins were made: nothing will use them
      throw error;
    }
  });
}
