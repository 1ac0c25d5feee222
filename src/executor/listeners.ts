/** A set of executor event listeners (shared by both implementations). */
import type { ExecutorEventListener, ProcessEvent } from './executor.js';

export class ListenerSet {
  private readonly listeners = new Set<ExecutorEventListener>();

  add(listener: ExecutorEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(processId: string, event: ProcessEvent): void {
    for (const listener of this.listeners) listener(processId, event);
  }
}
