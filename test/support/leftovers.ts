/**
 * What tests start on their own outlives a test worker that is killed or whose cleanup timed out:
 * process groups (WebSocket listeners, `detached`) and their scratch directories. Each is listed
 * in a file named after the vitest process (the workers' parent), and the run's global teardown
 * kills every group and removes every directory listed there (one its test stopped or removed is
 * gone already).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const listFor = (vitestPid: number) => path.join(os.tmpdir(), `exec-server-test-leftovers-${vitestPid}`);

/** Called in a worker: lists the process group led by `pid`, or the directory `dir`. */
export function recordLeftover(what: number | string): void {
  fs.appendFileSync(listFor(process.ppid), `${what}\n`);
}

function remove(line: string): void {
  if (line.startsWith('/')) return void fs.rmSync(line, { recursive: true, force: true });
  try {
    process.kill(-Number(line), 'SIGKILL');
  } catch {
    // ESRCH: stopped by its test
  }
}

/** vitest's global setup: its teardown removes what the workers listed, and the list. */
export default function setup(): () => void {
  return () => {
    const list = listFor(process.pid);
    if (!fs.existsSync(list)) return;
    const lines = fs.readFileSync(list, 'utf8').split('\n').filter(Boolean);
    // Groups first: a listener may still use its directory.
    for (const line of lines.filter((entry) => !entry.startsWith('/'))) remove(line);
    for (const line of lines.filter((entry) => entry.startsWith('/'))) remove(line);
    fs.rmSync(list, { force: true });
  };
}
