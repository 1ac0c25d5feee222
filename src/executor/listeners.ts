/** A set of executor event listeners (shared by both implementations). */
import type { ExecutorEventListener, ProcessEvent } from './executor.js';

export class ListenerSet {
  private readonly listeners = new Set<ExecutorEventListener>();

  add(listener: ExecutorEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Hands the event to every listener. One that throws does not keep it from the others nor
   * unwind the caller (the server's own output and exit code, for a LocalExecutor): its error
   * is thrown again on its own, as an uncaught exception of the host, as Node does for a
   * throwing listener of an emitter in an I/O callback.
   */
  emit(processId: string, event: ProcessEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(processId, event);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}
