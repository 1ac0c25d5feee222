/** The guardian's registry, through a real `sh` guardian and real process groups. */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { Guardian } from '../src/server/process/guardian.js';
import { isAlive, waitDead } from './support/proc.js';

const spawned: Array<ReturnType<typeof spawn>> = [];

function sleeper(marker: string) {
  const child = spawn('sleep', [marker], { detached: true, stdio: 'ignore' });
  spawned.push(child);
  return child.pid!;
}

afterEach(() => {
  for (const child of spawned.splice(0)) child.kill('SIGKILL');
});

describe('Guardian', () => {
  it('kills the registered groups that were never released, and only those', async () => {
    const guardian = new Guardian();
    const kept = sleeper('30.61');
    const released = sleeper('30.62');
    guardian.watch(kept);
    guardian.watch(released);
    guardian.reap(released);
    guardian.forget([released]); // the server swept what it left
    guardian.stop(); // end of its stdin, as when the server dies
    expect(await waitDead([kept])).toEqual([]);
    expect(isAlive(released)).toBe(true);
  });

  it('still knows every live group after rewriting its registry many times', async () => {
    const guardian = new Guardian(16);
    const kept = [sleeper('30.63'), sleeper('30.64')];
    const released = sleeper('30.65');
    for (const pid of kept) guardian.watch(pid);
    for (let i = 0; i < 20; i++) {
      guardian.watch(released);
      guardian.reap(released);
      guardian.forget([released]);
    }
    guardian.stop();
    expect(await waitDead(kept)).toEqual([]);
    expect(isAlive(released)).toBe(true);
  });

  it('kills what a reaped leader left in its group, unless a live process has the number now', async () => {
    const guardian = new Guardian();
    // A leader that exits at once, leaving a job in its group; Node reaps it.
    const leader = spawn('sh', ['-c', 'sleep 30.66 >/dev/null 2>&1 & echo $!'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    spawned.push(leader);
    let printed = '';
    leader.stdout!.on('data', (chunk) => (printed += chunk));
    await new Promise((resolve) => leader.on('close', resolve));
    const left = Number.parseInt(printed, 10);
    expect(isAlive(left)).toBe(true);
    // A number that a live process holds stands for that process now, not for a group of ours.
    const stranger = sleeper('30.67');
    for (const pid of [leader.pid!, stranger]) {
      guardian.watch(pid);
      guardian.reap(pid);
    }
    guardian.stop();
    try {
      expect(await waitDead([left])).toEqual([]);
      expect(isAlive(stranger)).toBe(true);
    } finally {
      if (isAlive(left)) process.kill(left, 'SIGKILL');
    }
  });

  it('kills a live group whose number an earlier leader had, even after that earlier one is forgotten', async () => {
    const guardian = new Guardian();
    const reused = sleeper('30.68');
    guardian.reap(reused); // an earlier process's leader, reaped; the number came back for a new group
    guardian.watch(reused);
    guardian.forget([reused]); // the earlier one's session ends (another session's, in WebSocket mode)
    guardian.stop();
    expect(await waitDead([reused])).toEqual([]);
  });
});
