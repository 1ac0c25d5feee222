/**
 * Lowers the scheduling priority of Node's background threads (V8's
 * optimizing compiler and GC helpers, Node's delayed-task and signal
 * threads) to the lowest, so that on a small machine they take the CPU
 * only when the main thread, the libuv threadpool and the client leave it
 * idle. On two cores, the compiler's work during a fresh server's first
 * thousands of requests otherwise stalls answers for milliseconds
 * (`npm run bench -- --only rtt-cold`, the p99).
 *
 * Linux keeps a nice value per thread and `setpriority` with a thread id
 * sets that thread's alone. Called before the process has done any
 * threadpool work, every thread but the main one is a background thread;
 * the threadpool, started later by the main thread, keeps its priority, as
 * does every child (a child inherits the priority of the thread that forks
 * it: always the main thread). Raising a nice value needs no privilege.
 * Elsewhere (no /proc/self/task) nothing is changed.
 *
 * A nice value only weighs the scheduler's shares: a woken main thread may
 * still wait for a background thread's slice to end. So once the spawner
 * runs, it puts these threads under SCHED_IDLE (a policy Node cannot set),
 * which any other thread preempts at once (`spawner.pl`, `idle_threads`).
 */
import fs from 'node:fs';
import os from 'node:os';

/** The lowest priority (the highest nice value). */
const LOWEST = 19;

/** Sets every thread of this process but the main one to the lowest priority; returns their ids. */
export function deprioritizeBackgroundThreads(): number[] {
  let tids: number[];
  try {
    tids = fs.readdirSync('/proc/self/task').map(Number);
  } catch {
    return [];
  }
  const lowered: number[] = [];
  for (const tid of tids) {
    if (tid === process.pid) continue;
    try {
      os.setPriority(tid, LOWEST);
      lowered.push(tid);
    } catch {
      // gone, or not allowed: it keeps its priority
    }
  }
  return lowered;
}
