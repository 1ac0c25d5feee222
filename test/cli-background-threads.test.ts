/**
 * The CLI lowers Node's background threads (V8's compiler and GC helpers)
 * to the lowest priority (src/cli/background-threads.ts); the main thread,
 * the libuv threadpool it starts later, and every child keep the priority
 * the server was started with. Linux: nice values per thread in /proc.
 */
import fs from 'node:fs';
import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { BASE_ENV, ServerPool } from './support/server-process.js';

const servers = new ServerPool();
afterEach(() => servers.disposeAll());

/** The nice value in a /proc stat line (its 19th field; the fields are counted after the `(comm)`, which may hold spaces). */
function niceIn(stat: string): number {
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** The scheduling policy in a /proc stat line (its 41st field; 5 is SCHED_IDLE). */
function policyIn(stat: string): number {
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38]);
}

/** `read(stat line)` by thread id, for every thread of `pid`. */
function threadFields(pid: number, read: (stat: string) => number): Map<number, number> {
  const values = new Map<number, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      values.set(Number(tid), read(fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1')));
    } catch {
      // the thread ended meanwhile
    }
  }
  return values;
}

const threadNices = (pid: number) => threadFields(pid, niceIn);
const IDLE_LOG = / (\d+) background threads under SCHED_IDLE/;
const SCHED_IDLE = 5;

const BASE = os.getPriority();
const THREADPOOL = 3;

describe.skipIf(process.platform !== 'linux' || BASE === 19)('background threads', () => {
  it('run at the lowest priority; the main thread and the threadpool keep the server’s', async () => {
    const server = await servers.started([], { ...process.env, UV_THREADPOOL_SIZE: String(THREADPOOL) });
    // fs/getMetadata stats through the threadpool: all of its threads are running by its answer.
    await server.request('fs/getMetadata', { path: '/tmp' });
    const pid = server.child.pid!;
    const nices = threadNices(pid);
    expect(nices.get(pid)).toBe(BASE);
    const lowered = [...nices.values()].filter((nice) => nice === 19);
    const kept = [...nices.values()].filter((nice) => nice === BASE);
    expect(lowered.length).toBeGreaterThan(0);
    expect(kept.length).toBeGreaterThanOrEqual(1 + THREADPOOL);
    expect(lowered.length + kept.length).toBe(nices.size);
  });

  it('go under SCHED_IDLE once the spawner runs, and no other thread does', async () => {
    const server = await servers.started(['--log-level', 'debug']);
    const logged = await new Promise<RegExpExecArray>((resolve) => {
      const check = () => {
        const match = IDLE_LOG.exec(server.stderr);
        if (match) resolve(match);
      };
      server.child.stderr.on('data', check);
      check();
    });
    const pid = server.child.pid!;
    const policies = threadFields(pid, policyIn);
    const nices = threadNices(pid);
    const idle = [...policies].filter(([, policy]) => policy === SCHED_IDLE).map(([tid]) => tid);
    expect(idle.length).toBe(Number(logged[1]));
    expect(idle.length).toBeGreaterThan(0);
    for (const [tid, nice] of nices) expect(policies.get(tid) === SCHED_IDLE).toBe(nice === 19);
  });

  it.each([false, true])('children (tty %s) keep the server’s priority', async (tty) => {
    const server = await servers.started();
    const { output } = await server.runToClose(`nice-${tty}`, ['cat', '/proc/self/stat'], { env: BASE_ENV, tty });
    expect(niceIn(output.trim())).toBe(BASE);
    expect(policyIn(output.trim())).toBe(policyIn(fs.readFileSync('/proc/self/stat', 'latin1')));
  });
});
