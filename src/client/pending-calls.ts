/**
 * Calls that fail together: when the link drops or the client disconnects,
 * every call still pending rejects at once. Not `Promise.race` against one
 * long-lived promise: each race leaves a reaction on that promise, holding
 * the race's own promise and so the call's result, for as long as it stays
 * pending (a client that read a gigabyte through `openRead` kept it all
 * until it closed). A call here leaves nothing behind once it settles.
 */
export class PendingCalls {
  private readonly rejecters = new Set<(error: unknown) => void>();
  private failure: { error: unknown } | undefined;

  /** `call`'s outcome, or the failure if `failAll` comes first (at once if it came already). */
  track<T>(call: Promise<T>): Promise<T> {
    if (this.failure) {
      call.catch(() => undefined); // its own rejection is no longer anyone's concern
      return Promise.reject(this.failure.error);
    }
    return new Promise<T>((resolve, reject) => {
      this.rejecters.add(reject);
      call.then(
        (value) => {
          this.rejecters.delete(reject);
          resolve(value);
        },
        (error: unknown) => {
          this.rejecters.delete(reject);
          reject(error);
        },
      );
    });
  }

  /** Rejects every pending call, and every later one, with `error` (once). */
  failAll(error: unknown): void {
    if (this.failure) return;
    this.failure = { error };
    for (const reject of this.rejecters) reject(error);
    this.rejecters.clear();
  }
}
