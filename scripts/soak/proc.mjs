// What the soak reads from /proc: processes, descriptors, memory, zombies, leftovers.
import fs from 'node:fs';

const procPids = () => fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
export const fdCount = (pid) => fs.readdirSync(`/proc/${pid}/fd`).length;
export const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);

/** Every zombie on the machine as {pid, ppid}; processes that vanish mid-scan are skipped. */
export function zombies() {
  const found = [];
  for (const pid of procPids()) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The command name may contain spaces or parentheses: fields start after the last ')'.
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z') found.push({ pid: Number(pid), ppid: Number(ppid) });
    } catch {}
  }
  return found;
}

/** Live processes whose argv carries `marker` (zombies have an empty cmdline, so they are not counted here). */
export function leftovers(marker) {
  return procPids().filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
    } catch {
      return false;
    }
  }).length;
}
