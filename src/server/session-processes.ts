/**
 * A session's process table, which can outlive its connection. While the
 * session is detached (its WebSocket dropped, see `session-registry.ts`) its
 * events go nowhere: the output log keeps them for `process/read` after a
 * resume. Its children are paused meanwhile, so that output produced while
 * nobody listens cannot push unread output out of the log.
 */
import type { OutputStream } from '../protocol/types.js';
import type { Generation } from './client-generation.js';
import type { ProcessEventSink } from './process/managed-process.js';
import { ProcessManager, type ProcessManagerOptions } from './process/process-manager.js';

export class SessionProcesses {
  readonly manager: ProcessManager;
  private target: ProcessEventSink | undefined;
  /** The generation of the last connection, which shapes exit codes while detached. */
  private lastGeneration: Generation = 1;

  constructor(options: ProcessManagerOptions) {
    this.manager = new ProcessManager(this.forwarder(), options);
  }

  get attached(): boolean {
    return this.target !== undefined;
  }

  /** The generation of the connection attached, or of the last one. */
  get generation(): Generation {
    return this.target?.generation() ?? this.lastGeneration;
  }

  /**
   * Events go to `target` from now on. Paused children resume once the
   * answer to the `initialize` that attached them is out (a notification
   * must not come before it); closed processes stay readable for the full
   * retention again.
   */
  attach(target: ProcessEventSink): void {
    this.target = target;
    this.manager.holdRetention(false);
    setImmediate(() => {
      if (this.target === target) this.manager.resumeAll();
    });
  }

  /** Nobody listens: children pause, and closed processes are kept until a resume or the end. */
  detach(): void {
    if (this.target) this.lastGeneration = this.target.generation();
    this.target = undefined;
    this.manager.pauseAll();
    this.manager.holdRetention(true);
  }

  private forwarder(): ProcessEventSink {
    return {
      output: (processId: string, seq: number, stream: OutputStream, bytes: Buffer) => this.target?.output(processId, seq, stream, bytes),
      exited: (processId: string, seq: number, exitCode: number, sandboxDenied: boolean) =>
        this.target?.exited(processId, seq, exitCode, sandboxDenied),
      closed: (processId: string, seq: number) => this.target?.closed(processId, seq),
      generation: () => this.target?.generation() ?? this.lastGeneration,
    };
  }
}
