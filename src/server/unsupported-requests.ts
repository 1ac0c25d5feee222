/**
 * What a client may ask for that this server does not do (yet): a managed
 * network, shell snapshots, credential masking (sandbox policies are
 * enforced: `sandbox/policy.ts`). Codex sends
 * these members on every call, mostly empty; an empty one is accepted. One
 * that asks for something is refused with −32602 naming the member, never
 * ignored: nothing may run unconfined when its user asked for a sandbox.
 */
import { Errors } from '../protocol/errors.js';

export interface CodexExtras {
  enforceManagedNetwork?: unknown;
  managedNetwork?: unknown;
  networkProxy?: unknown;
  shellSnapshot?: unknown;
  credentialProviders?: unknown;
}

const isEmpty = (value: unknown) => value === undefined || value === null || (Array.isArray(value) && value.length === 0);

/** Throws −32602 for the first member that asks for more than this server does. */
export function refuseUnsupported(params: CodexExtras): void {
  if (params.enforceManagedNetwork !== undefined && params.enforceManagedNetwork !== null && params.enforceManagedNetwork !== false) {
    throw Errors.unsupportedMember('enforceManagedNetwork', 'a managed network cannot be enforced by this exec-server');
  }
  if (!isEmpty(params.managedNetwork)) throw Errors.unsupportedMember('managedNetwork', 'this exec-server has no managed network');
  if (!isEmpty(params.networkProxy)) throw Errors.unsupportedMember('networkProxy', 'this exec-server cannot launch a network proxy');
  if (!isEmpty(params.shellSnapshot)) throw Errors.unsupportedMember('shellSnapshot', 'this exec-server does not take shell snapshots');
  if (!isEmpty(params.credentialProviders))
    throw Errors.unsupportedMember('credentialProviders', 'this exec-server does not mask credentials');
}
