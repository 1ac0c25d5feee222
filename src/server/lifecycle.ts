/** The handshake (§2): one `initialize`, then `initialized`, then the gated families. */
import { randomUUID } from 'node:crypto';
import { Errors } from '../protocol/errors.js';
import type { GateFamily } from '../protocol/methods.js';
import type { InitializeResult } from '../protocol/types.js';

export class Lifecycle {
  private sessionId: string | undefined;
  private initializedReceived = false;

  initialize(params: { resumeSessionId?: string | null | undefined }): InitializeResult {
    if (this.sessionId !== undefined) throw Errors.initializeTwice();
    // Over stdio every server starts with an empty session registry (§2.1),
    // and a failed resume does not use up the one allowed initialize.
    if (params.resumeSessionId !== undefined && params.resumeSessionId !== null) {
      throw Errors.unknownSession(params.resumeSessionId);
    }
    this.sessionId = randomUUID();
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
