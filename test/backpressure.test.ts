import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerProcess } from './support/server-process.js';

const servers: ServerProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.dispose()));
});

function rssBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'latin1');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) * 1024;
}

const GiB = 1024 * 1024 * 1024;

describe('backpressure', () => {
  it('holds a 1 GiB writer back while the client stalls, then delivers every byte', async () => {
    const server = await ServerProcess.started();
    servers.push(server);
    server.keepOutput = false;
    const pid = server.child.pid!;
    const before = rssBytes(pid);
    server.child.stdout.pause();
    server.send({
      id: 'flood',
      method: 'process/start',
      params: { processId: 'flood', argv: ['head', '-c', String(GiB), '/dev/zero'], cwd: '/', env: {}, tty: false },
    });
    // The scenario itself is a client that reads nothing for 5 s.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const stalled = rssBytes(pid);
    server.child.stdout.resume();
    await server.waitClosed('flood', 60_000);
    expect(server.outputBytes.get('flood')).toBe(GiB);
    expect(stalled - before).toBeLessThan(64 * 1024 * 1024);
  }, 90_000);
});
