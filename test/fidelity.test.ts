/**
 * What a program run through the server sees, compared with a terminal or a
 * CI runner: real pipes on fds 0-2 whichever path starts the child, no
 * job-control grandchild left behind however the process ends, and no crash
 * when streamed HTTP bodies meet a slow client.
 */
import fs from 'node:fs';
import http from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeLoopback, listenLoopback } from './support/loopback.js';
import { isAlive, waitDead } from './support/proc.js';
import { b64, ServerPool, type ServerProcess } from './support/server-process.js';

const SPAWN_MODES = ['never', 'always'] as const;
const servers = new ServerPool();
const startServer = (mode: string) => servers.started([], { ...process.env, EXEC_SERVER_SPAWNER: mode });
afterEach(() => servers.disposeAll());

let counter = 0;
const nextId = () => `f${++counter}`;

async function run(server: ServerProcess, script: string, extra = {}) {
  const processId = nextId();
  await server.start(processId, ['bash', '-c', script], extra);
  await server.waitClosed(processId);
  const byStream = (stream: string) =>
    Buffer.concat(
      server
        .notifications(processId)
        .filter((m) => m.method === 'process/output' && m.params.stream === stream)
        .map((m) => Buffer.from(m.params.chunk, 'base64')),
    ).toString();
  return { stdout: byStream('stdout'), stderr: byStream('stderr') };
}

describe.each(SPAWN_MODES)('pipe children (EXEC_SERVER_SPAWNER=%s) get real pipes', (mode) => {
  it('delivers writes to /dev/stdout and /dev/stderr on their own streams', async () => {
    const server = await startServer(mode);
    const result = await run(server, 'echo to-out > /dev/stdout; echo to-err > /dev/stderr; echo plain');
    expect(result).toEqual({ stdout: 'to-out\nplain\n', stderr: 'to-err\n' });
  });

  it('has pipe: on fds 0-2 with pipeStdin, /dev/null on 0 without', async () => {
    const server = await startServer(mode);
    const probe = 'for fd in 0 1 2; do readlink /proc/$$/fd/$fd | cut -d[ -f1; done; [ -p /dev/stdin ] && echo stdin-is-fifo';
    const piped = await run(server, probe, { pipeStdin: true });
    expect(piped.stdout).toBe('pipe:\npipe:\npipe:\nstdin-is-fifo\n');
    const plain = await run(server, probe);
    expect(plain.stdout).toBe('/dev/null\npipe:\npipe:\n');
  });

  it('passes stdin through a pipe to the end', async () => {
    const server = await startServer(mode);
    const processId = nextId();
    await server.start(processId, ['bash', '-c', 'cat > /dev/stdout'], { pipeStdin: true });
    await server.request('process/write', { processId, chunk: b64('line one\nline two\n'), closeStdin: true });
    await server.waitClosed(processId);
    expect(server.output(processId).toString()).toBe('line one\nline two\n');
  });
});

/** Starts `bash -c 'set -m; sleep … &'` and returns the pid of the job, which has its own group. */
async function startJobControl(server: ServerProcess, marker: string) {
  const processId = nextId();
  await server.start(processId, ['bash', '-c', `set -m; sleep ${marker} & echo $!; wait`]);
  const line = await server.waitFor((m) => m.method === 'process/output' && m.params.processId === processId);
  const jobPid = Number(Buffer.from(line.params.chunk, 'base64').toString().trim());
  const stat = fs.readFileSync(`/proc/${jobPid}/stat`, 'latin1');
  const [, , pgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  expect(Number(pgid)).toBe(jobPid); // its own group: a group kill of the child would miss it
  return { processId, jobPid };
}

describe.each(SPAWN_MODES)('job-control grandchildren of pipe children (EXEC_SERVER_SPAWNER=%s)', (mode) => {
  it('die with process/terminate', async () => {
    const server = await startServer(mode);
    const { processId, jobPid } = await startJobControl(server, '60.101');
    expect((await server.request('process/terminate', { processId })).running).toBe(true);
    expect(await waitDead([jobPid])).toEqual([]);
    await server.waitClosed(processId);
  });

  it('die at end of input', async () => {
    const server = await startServer(mode);
    const { jobPid } = await startJobControl(server, '60.102');
    await server.close();
    expect(await waitDead([jobPid])).toEqual([]);
  });

  it('die when the server gets SIGTERM', async () => {
    const server = await startServer(mode);
    const { jobPid } = await startJobControl(server, '60.103');
    server.child.kill('SIGTERM');
    await server.exited;
    expect(await waitDead([jobPid])).toEqual([]);
  });

  it('die when the server is SIGKILLed (the guardian sweeps the session)', async () => {
    const server = await startServer(mode);
    const { jobPid } = await startJobControl(server, '60.104');
    server.child.kill('SIGKILL');
    await server.exited;
    expect(await waitDead([jobPid])).toEqual([]);
  });

  it('die at end of input even after the leader exited and left them holding the pipes', async () => {
    const server = await startServer(mode);
    const processId = nextId();
    await server.start(processId, ['bash', '-c', 'set -m; sleep 60.105 & echo $!']);
    const line = await server.waitFor((m) => m.method === 'process/output' && m.params.processId === processId);
    const exited = await server.waitFor((m) => m.method === 'process/exited' && m.params.processId === processId);
    expect(exited.params.exitCode).toBe(0);
    const jobPid = Number(Buffer.from(line.params.chunk, 'base64').toString().trim());
    expect(isAlive(jobPid)).toBe(true);
    await server.close();
    expect(await waitDead([jobPid])).toEqual([]);
  });

  it.each(['at end of input', 'when the server is SIGKILLed (the guardian)'])(
    'die %s after their leader closed (output sent elsewhere, a job in another group, a PTY job ignoring SIGHUP)',
    async (ending) => {
      const server = await startServer(mode);
      const scripts: Array<[string, boolean]> = [
        ['sleep 60.106 >/dev/null 2>&1 & echo $!', false],
        ['set -m; sleep 60.107 >/dev/null 2>&1 & echo $!', false],
        ["trap '' HUP; sleep 60.108 >/dev/null 2>&1 & echo $!; sleep 0.2", true],
      ];
      const pids: number[] = [];
      for (const [script, tty] of scripts) {
        const processId = nextId();
        await server.start(processId, ['bash', '-c', script], { tty });
        await server.waitClosed(processId);
        pids.push(Number.parseInt(server.output(processId).toString(), 10));
      }
      expect(pids.filter((pid) => !isAlive(pid))).toEqual([]);
      if (ending === 'at end of input') {
        await server.close();
      } else {
        server.child.kill('SIGKILL');
        await server.exited;
      }
      expect(await waitDead(pids)).toEqual([]);
    },
  );
});

describe('streamed HTTP bodies under a slow client', () => {
  let web: http.Server;
  let base: string;
  const heldHeads: Array<() => void> = [];
  const headWaiters: Array<() => void> = [];

  beforeAll(async () => {
    web = http.createServer((req, res) => {
      if (req.url === '/flood') return void res.end(Buffer.alloc(8 * 1024 * 1024, 97));
      // The head waits for the test; then the body trickles out in 20 pieces.
      heldHeads.push(() => {
        res.writeHead(200);
        let n = 0;
        const timer = setInterval(() => {
          res.write(`${req.url}:${n};`);
          if (++n === 20) {
            clearInterval(timer);
            res.end();
          }
        }, 2);
      });
      for (const wake of headWaiters.splice(0)) wake();
    });
    base = await listenLoopback(web);
  });
  afterAll(async () => {
    await closeLoopback(web);
  });

  async function headsHeld(count: number): Promise<void> {
    while (heldHeads.length < count) await new Promise<void>((resolve) => headWaiters.push(resolve));
  }

  function body(server: ServerProcess, requestId: string): { text: string; done: boolean; error: unknown; seqs: number[] } {
    const deltas = server.messages.filter((m) => m.method === 'http/request/bodyDelta' && m.params.requestId === requestId);
    return {
      text: Buffer.concat(deltas.map((m) => Buffer.from(m.params.deltaBase64, 'base64'))).toString(),
      done: deltas.at(-1)?.params.done === true,
      error: deltas.at(-1)?.params.error,
      seqs: deltas.map((m) => m.params.seq),
    };
  }

  it('serves four concurrent streams whose heads are pending when the client catches up', async () => {
    const server = await startServer('never');
    server.keepOutput = true;
    await server.request('http/request', { method: 'GET', url: `${base}/flood`, requestId: 'flood', streamResponse: true });
    const ids = ['s1', 's2', 's3', 's4'];
    // Read while the client still reads: a congested server reads no more requests until its client
    // catches up (input-hold.ts), so requests sent while it stalls would wait in the pipe.
    const answers = ids.map((requestId, i) =>
      server.call('http/request', { method: 'GET', url: `${base}/t${i}`, requestId, streamResponse: true }),
    );
    await headsHeld(4); // every request is in flight, its head not yet answered
    // The client stops reading mid-flood for a while (the scenario, not a wait for anything): the
    // server becomes congested and holds its streams; then the client catches up and they resume.
    server.child.stdout.pause();
    await new Promise((resolve) => setTimeout(resolve, 200));
    server.child.stdout.resume();
    await server.waitFor((m) => m.method === 'http/request/bodyDelta' && m.params.requestId === 'flood' && m.params.done);
    for (const release of heldHeads.splice(0)) release();
    for (const answer of await Promise.all(answers)) expect(answer.result?.status).toBe(200);
    for (const [i, requestId] of ids.entries()) {
      await server.waitFor((m) => m.method === 'http/request/bodyDelta' && m.params.requestId === requestId && m.params.done);
      const received = body(server, requestId);
      expect(received.text).toBe(Array.from({ length: 20 }, (_, n) => `/t${i}:${n};`).join(''));
      expect(received.error).toBeNull();
      expect(received.seqs).toEqual(received.seqs.map((_, n) => n + 1));
    }
    expect(body(server, 'flood').text.length).toBe(8 * 1024 * 1024);
    expect(await server.request('fs/getMetadata', { path: '/' })).toMatchObject({ isDirectory: true });
  });
});

describe('a read woken by the exit', () => {
  it('says closed when the pipes had ended before it, as the reference does (both ways of spawning)', async () => {
    for (const mode of SPAWN_MODES) {
      const server = await startServer(mode);
      const processId = nextId();
      await server.start(processId, ['sh', '-c', 'echo x; exec >&- 2>&-; sleep 0.3; exit 4']);
      await server.waitFor((m) => m.method === 'process/output' && m.params.processId === processId);
      const read = await server.request('process/read', { processId, afterSeq: 1, waitMs: 5000 });
      expect(read, mode).toMatchObject({ exited: true, exitCode: 4, closed: true, nextSeq: 4 });
    }
  });
});
