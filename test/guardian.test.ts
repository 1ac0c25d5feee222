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
    guardian.release(released);
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
      guardian.release(released);
    }
    guardian.stop();
    expect(await waitDead(kept)).toEqual([]);
    expect(isAlive(released)).toBe(true);
  });
});
