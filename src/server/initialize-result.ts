/** The answer to `initialize`, the same from the request's handler and from the CLI's first answer (`early-initialize.ts`). */
import type { InitializeResult } from '../protocol/types.js';
import { environmentInfo, type SandboxSupport } from './environment-info.js';

/** The session's id, and the environment in generation 2's shape: generation 1 clients ignore the member. */
export function initializeResult(sessionId: string, sandbox: SandboxSupport): InitializeResult {
  return { sessionId, environmentInfo: environmentInfo(2, sandbox) };
}
