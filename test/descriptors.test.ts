/**
 * The server's descriptors: the CLI closes what its parent leaked to it
 * (descriptors without close-on-exec) before its first child starts, so
 * children see only fds 0-2 (§3.2), on pipes and under a PTY, whoever spawns
 * them; and a process once closed holds none of the server's.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { execedAs, settledFds } from './support/proc.js';
import { CLI, ServerProcess } from './support/server-process.js';

/** The CLI as a careless parent starts it: sh opens fds 3 and 4 without close-on-exec, and the server inherits them. */
const LEAKING_PARENT: [string, string[]] = ['/bin/sh', ['-c', `exec "${process.execPath}" "${CLI}" 3</dev/null 4>>/dev/null`]];

describe('descriptors the server inherited', () => {
  it.each(['auto', 'never'])('reach no child, on pipes or under a PTY (spawner %s)', async (mode) => {
    const server = await ServerProcess.started([], { ...process.env, EXEC_SERVER_SPAWNER: mode }, undefined, LEAKING_PARENT);
    try {
      await server.start('pipe', ['sleep', `30.40${mode.length}`], { pipeStdin: true });
      await server.start('tty', ['sleep', `30.41${mode.length}`], { tty: true });
      for (const marker of [`30.40${mode.length}`, `30.41${mode.length}`]) {
        expect(await settledFds(await execedAs('sleep', marker))).toEqual(['0', '1', '2']);
      }
      for (const processId of ['pipe', 'tty']) {
        await server.request('process/terminate', { processId });
        await server.waitClosed(processId);
      }
    } finally {
      await server.dispose();
    }
  });
});

describe("a closed process's descriptors", () => {
  it.each(['auto', 'always'])('are all closed in the server, stdin included, however it ended (spawner %s)', async (mode) => {
    // A long retention: closing them must not wait for the process to be forgotten.
    const server = await ServerProcess.started(['--retention-ms', '600000'], { ...process.env, EXEC_SERVER_SPAWNER: mode });
    const open = () => fs.readdirSync(`/proc/${server.child.pid}/fd`).length;
    try {
      // The first start brings the guardian, the spawner and its pipes: counted before, not after.
      await server.runToClose('warm', ['true'], { pipeStdin: true });
      const before = open();
      for (let i = 0; i < 20; i++) await server.runToClose(`exited-${i}`, ['true'], { pipeStdin: true });
      for (let i = 0; i < 5; i++) {
        await server.start(`terminated-${i}`, ['sleep', '30'], { pipeStdin: true });
        await server.request('process/terminate', { processId: `terminated-${i}` });
        await server.waitClosed(`terminated-${i}`);
      }
      expect(open()).toBeLessThanOrEqual(before);
    } finally {
      await server.dispose();
    }
  });
});
