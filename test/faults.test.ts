/**
 * Fault injection: a client frozen by SIGSTOP mid-flood, a client that dies
 * mid-request, children that close stdout early, ignore SIGTERM or leave a
 * `setsid` daemon behind, and writes racing a child's exit. Each case ends
 * with the server still serving (or exited cleanly) and nothing leaked.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { findByCmdline, isAlive, waitDead, waitFound } from './support/proc.js';
import { b64, BASE_ENV, CLI, ServerPool, type Json } from './support/server-process.js';

const servers = new ServerPool();
afterEach(() => servers.disposeAll());
const started = () => servers.started();

describe('the client misbehaves', () => {
  it('delivers a flood intact through a client frozen by SIGSTOP, then serves on', async () => {
    // The server's stdout goes through `cat`, the "client" we freeze.
    const relay = spawn('cat', [], { stdio: ['pipe', 'pipe', 'inherit'] });
    const server = spawn(process.execPath, [CLI], { stdio: ['pipe', relay.stdin, 'inherit'] });
    relay.stdin.destroy(); // only the server writes to the relay, so that it sees EOF when the server exits
    const exits = [server, relay].map((child) => new Promise((resolve) => child.once('exit', resolve)));
    const seqs: number[] = [];
    let bytes = 0;
    const answers = new Map<unknown, Json>();
    const lines = createInterface({ input: relay.stdout });
    const closed = new Promise<void>((resolve) => {
      lines.on('line', (line) => {
        const message = JSON.parse(line);
        if (message.method?.startsWith('process/')) seqs.push(message.params.seq);
        if (message.method === 'process/output') bytes += Buffer.from(message.params.chunk, 'base64').length;
        else if (message.method === 'process/closed') resolve();
        else if (!message.method) answers.set(message.id, message);
      });
    });
    const send = (message: Json) => server.stdin.write(`${JSON.stringify(message)}\n`);
    send({ id: 1, method: 'initialize', params: { clientName: 'frozen' } });
    send({ method: 'initialized' });
    send({
      id: 2,
      method: 'process/start',
      params: { processId: 'flood', argv: ['head', '-c', String(64 << 20), '/dev/zero'], cwd: '/', env: {}, tty: false },
    });
    await new Promise((resolve) => setTimeout(resolve, 50)); // let the flood begin
    relay.kill('SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, 500)); // the scenario: a client frozen for half a second
    relay.kill('SIGCONT');
    await closed;
    expect(bytes).toBe(64 << 20);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    send({ id: 3, method: 'fs/getMetadata', params: { path: '/' } });
    server.stdin.end();
    await Promise.all(exits);
    expect(answers.get(3)?.result?.isDirectory).toBe(true);
  });

  it('kills everything when the client dies mid-request (input gone, output broken)', async () => {
    const server = await started();
    await server.start('busy', ['sh', '-c', 'sleep 60.201 & yes', 'fault-client-dies']);
    server.send({ id: 'pending', method: 'process/read', params: { processId: 'busy', afterSeq: 1_000_000, waitMs: 60_000 } });
    const children = findByCmdline('fault-client-dies').concat(findByCmdline('60.201', 'sleep'));
    server.child.stdout.destroy();
    server.child.stdin.destroy();
    const exit = await server.exited;
    expect(exit.signal).toBeNull();
    expect(await waitDead(children)).toEqual([]);
  });
});

describe('children misbehave', () => {
  it('reports stderr, exit and close of a child that closed its stdout early and kept running', async () => {
    const server = await started();
    await server.start('early', ['sh', '-c', 'exec 1>&-; sleep 0.3; echo still-here >&2; exit 4']);
    await server.waitClosed('early');
    const events = server.notifications('early');
    expect(events.map((m) => m.method)).toEqual(['process/output', 'process/exited', 'process/closed']);
    expect(events[0]!.params.stream).toBe('stderr');
    expect(events[1]!.params.exitCode).toBe(4);
  });

  it('kills a child that ignores SIGTERM: process/signal TERM leaves it, process/terminate does not', async () => {
    const server = await started();
    await server.start('stubborn', ['sh', '-c', 'trap "" TERM; echo ready; while :; do sleep 0.05; done', 'fault-stubborn']);
    await server.waitFor((m) => m.method === 'process/output' && m.params.processId === 'stubborn');
    const [pid] = findByCmdline('fault-stubborn');
    await server.request('process/signal', { processId: 'stubborn', signal: 'SIGTERM' });
    const read = await server.request('process/read', { processId: 'stubborn', afterSeq: 1, waitMs: 200 });
    expect(read.exited).toBe(false);
    expect(isAlive(pid!)).toBe(true);
    expect((await server.request('process/terminate', { processId: 'stubborn' })).running).toBe(true);
    await server.waitClosed('stubborn');
    expect(await waitDead([pid!])).toEqual([]);
  });

  it('lets a setsid daemon with its own descriptors outlive the process and the server (it left the session)', async () => {
    const server = await started();
    await server.start('parent', ['sh', '-c', 'setsid sleep 60.202 </dev/null >/dev/null 2>&1 & echo spawned']);
    await server.waitClosed('parent');
    const [daemon] = await waitFound('60.202', 'sleep');
    expect(daemon).toBeDefined();
    await server.close();
    expect(isAlive(daemon!)).toBe(true);
    process.kill(daemon!, 'SIGKILL');
  });

  it('closes a process whose setsid daemon holds its pipes once the connection ends (after the grace period)', async () => {
    const server = await started();
    await server.start('holder', ['sh', '-c', 'setsid sleep 60.203 & echo spawned']);
    await server.waitFor((m) => m.method === 'process/exited' && m.params.processId === 'holder');
    const [daemon] = await waitFound('60.203', 'sleep');
    const exit = await server.close();
    expect(exit.code).toBe(0);
    expect(server.notifications('holder').at(-1)!.method).toBe('process/closed');
    process.kill(daemon!, 'SIGKILL');
  });

  it('answers every write racing a child exit, and stays up', async () => {
    const server = await started();
    const chunk = b64('x'.repeat(64 * 1024));
    for (let round = 0; round < 20; round++) {
      const processId = `race${round}`;
      await server.start(processId, ['sh', '-c', `head -c ${round * 4096} >/dev/null`], { pipeStdin: true });
      const statuses = await Promise.all(Array.from({ length: 8 }, () => server.request('process/write', { processId, chunk })));
      for (const { status } of statuses) expect(['accepted', 'stdinClosed']).toContain(status);
      await server.waitClosed(processId);
    }
    expect((await server.request('fs/getMetadata', { path: '/' })).isDirectory).toBe(true);
    expect(server.stderr).not.toMatch(/EPIPE|Error/);
  });
});

describe('a PTY child that exits while being written to', () => {
  it('answers the writes and reports the exit', async () => {
    const server = await started();
    await server.start('ptyrace', ['sh', '-c', 'read x; exit 7'], { tty: true, env: BASE_ENV });
    const writes = Array.from({ length: 10 }, () => server.call('process/write', { processId: 'ptyrace', chunk: b64('line\n') }));
    for (const answer of await Promise.all(writes)) expect(answer.error ?? answer.result).toBeDefined();
    await server.waitClosed('ptyrace');
    expect(server.notifications('ptyrace').find((m) => m.method === 'process/exited')!.params.exitCode).toBe(7);
  });
});
