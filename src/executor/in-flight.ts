/** Calls under way that a `close` waits for (each one cleans up after itself once it sees the close). */
export class InFlight {
  private readonly calls = new Set<Promise<unknown>>();

  /** `call`'s own result, the call tracked until it settles. */
  async track<T>(call: Promise<T>): Promise<T> {
    this.calls.add(call);
    try {
      return await call;
    } finally {
      this.calls.delete(call);
    }
  }

  /** Settles once every call now under way has settled, however it did. */
  async settled(): Promise<void> {
    await Promise.all([...this.calls].map((call) => call.catch(() => undefined)));
  }
}
