/**
 * A wait that ends when something calls the function it adds to `wakers`
 * (whoever holds the set wakes them all and clears it), or rejects with
 * `signal`'s reason if the signal aborts first.
 */
export function waitForWake(wakers: Set<() => void>, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      wakers.delete(wake);
      reject(signal?.reason);
    };
    const wake = () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    wakers.add(wake);
  });
}

/** Wakes every wait in `wakers` (see `waitForWake`). */
export function wakeAll(wakers: Set<() => void>): void {
  const waiting = [...wakers];
  wakers.clear();
  for (const wake of waiting) wake();
}
