/** The handshake (§2): one `initialize`, then `initialized`, then the gated families. */
import { Errors } from '../protocol/errors.js';
import type { GateFamily } from '../protocol/method-spec.js';
import type { InitializeResult } from '../protocol/types.js';

export class Lifecycle {
  private sessionId: string | undefined;
  private initializedReceived = false;

  /**
   * `attach` finds the session (a new one, or the one to resume) and returns
   * its id, or throws; a failed resume does not use up the one allowed
   * initialize. Over stdio the registry holds no other session (§2.1).
   */
  initialize(
    params: { resumeSessionId?: string | null | undefined },
    attach: (resumeSessionId: string | undefined) => string,
  ): InitializeResult {
    if (this.sessionId !== undefined) throw Errors.initializeTwice();
    this.sessionId = attach(params.resumeSessionId ?? undefined);
    return { sessionId: this.sessionId };
  }

  /** `initialized` before `initialize` is ignored (EXT-NOTIFY); the gate stays shut. */
  initialized(): void {
    if (this.sessionId !== undefined) this.initializedReceived = true;
  }

  checkGate(family: GateFamily): void {
    if (this.sessionId === undefined) throw Errors.notInitialized(family);
    if (!this.initializedReceived) throw Errors.notInitializedNotification(family);
  }
}
