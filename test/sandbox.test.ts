/**
 * Sandbox policies enforced with bubblewrap, tested by trying to escape:
 * writes outside the writable roots, through a symlink and `..`, the
 * network, a PTY shell, and a terminated tree. The policy is the one Codex
 * 0.169 sends for `--sandbox workspace-write` (PROTOCOL-V2.md appendix).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findBwrap } from '../src/server/sandbox/bwrap.js';
import { waitDead, waitFound } from './support/proc.js';
import { managedPolicy, special, workspaceWrite } from './support/sandbox-policy.js';
import { BASE_ENV, CLI, ServerProcess } from './support/server-process.js';

const hasBwrap = findBwrap(undefined) !== undefined;
let workspace: string;
let outside: string;
let server: ServerProcess;
let counter = 0;
const servers: ServerProcess[] = [];

beforeAll(async () => {
  // Outside /tmp: the policy makes /tmp writable, and the point is a directory that is not.
  const base = fs.mkdtempSync(path.join(os.homedir(), '.exec-server-sandbox-test-'));
  workspace = path.join(base, 'work');
  outside = path.join(base, 'outside');
  fs.mkdirSync(path.join(workspace, '.git'), { recursive: true });
  fs.mkdirSync(outside);
  fs.symlinkSync(outside, path.join(workspace, 'link-out'));
  server = await ServerProcess.started();
});
afterAll(async () => {
  await server.dispose();
  fs.rmSync(path.dirname(workspace), { recursive: true, force: true });
});
afterEach(async () => {
  for (const extra of servers.splice(0)) await extra.dispose();
});

async function sandboxed(script: string, extra: object = {}) {
  const processId = `sb${++counter}`;
  const started = await server.request('process/start', {
    processId,
    argv: ['bash', '-c', script],
    cwd: pathToFileURL(workspace).href,
    env: BASE_ENV,
    tty: false,
    sandbox: workspaceWrite(workspace),
    ...extra,
  });
  await server.waitClosed(processId);
  const exited = server.notifications(processId).find((m) => m.method === 'process/exited')!.params;
  return { started, exited, output: server.output(processId).toString() };
}

describe.skipIf(!hasBwrap)('sandboxed processes (bwrap)', () => {
  it('writes inside the workspace and /tmp, and nowhere else', async () => {
    const result = await sandboxed(
      `echo in > inside.txt && echo ok-inside; echo t > /tmp/exec-server-sbx-${process.pid} && echo ok-tmp; echo x > ${outside}/escape.txt; echo rc=$?`,
    );
    expect(result.started).toEqual({ processId: expect.any(String), sandboxType: 'linuxSeccomp' });
    expect(result.output).toContain('ok-inside');
    expect(result.output).toContain('ok-tmp');
    expect(result.output).toContain('Read-only file system');
    expect(result.output).toContain('rc=1');
    expect(fs.readFileSync(path.join(workspace, 'inside.txt'), 'utf8')).toBe('in\n');
    expect(fs.existsSync(path.join(outside, 'escape.txt'))).toBe(false);
    fs.rmSync(`/tmp/exec-server-sbx-${process.pid}`, { force: true });
  });

  it('denies escapes through a symlink, `..`, and into .git, and reports sandboxDenied', async () => {
    const result = await sandboxed(
      `echo a > link-out/via-link; echo b > ../outside/via-dotdot; echo c > .git/config; touch /etc/exec-server-escape`,
    );
    expect(result.output.match(/Read-only file system/g)?.length).toBe(4);
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.existsSync(path.join(workspace, '.git', 'config'))).toBe(false);
    expect(fs.existsSync('/etc/exec-server-escape')).toBe(false);
    expect(result.exited).toMatchObject({ exitCode: 1, sandboxDenied: true });
  });

  it('keeps an explicit arg0 inside the sandbox', async () => {
    const result = await sandboxed('tr "\\0" " " < /proc/$$/cmdline', { arg0: 'custom-name' });
    // m: under the network filter bash takes its stdin for a network connection (getpeername fails) and reads ~/.bashrc first, as under the reference.
    expect(result.output).toMatch(/^custom-name -c /m);
  });

  it('says sandboxDenied false for an ordinary failure', async () => {
    expect((await sandboxed('exit 3')).exited).toMatchObject({ exitCode: 3, sandboxDenied: false });
  });

  it('cuts the network when the policy restricts it, even to loopback', async () => {
    const listener = net.createServer((socket) => socket.end('hello\n'));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as net.AddressInfo).port;
    try {
      const denied = await sandboxed(`exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected || echo refused`);
      expect(denied.output).toContain('refused');
      const open = await sandboxed(`exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3`, { sandbox: workspaceWrite(workspace, 'enabled') });
      expect(open.output).toBe('hello\n');
    } finally {
      listener.close();
    }
  });

  it.each([
    ['managed, with an unrestricted file system', { type: 'managed', file_system: { type: 'unrestricted' }, network: 'restricted' }],
    ['external (the file system left to the sandbox the server runs in)', { type: 'external', network: 'restricted' }],
  ])('%s and a restricted network: writes anywhere but reaches no network', async (_kind, permissions) => {
    const listener = net.createServer((socket) => socket.end('hello\n'));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as net.AddressInfo).port;
    const sandbox = { permissions, windowsSandboxLevel: 'disabled' };
    try {
      const script = `echo out > ${outside}/anywhere && echo wrote; exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected || echo refused`;
      const run = await sandboxed(script, { sandbox });
      expect(run.started).toMatchObject({ sandboxType: 'linuxSeccomp' });
      expect(run.output).toContain('wrote\n');
      expect(run.output).toContain('refused\n');
      expect(run.output).not.toContain('connected');
      expect(fs.readFileSync(path.join(outside, 'anywhere'), 'utf8')).toBe('out\n');
    } finally {
      listener.close();
      fs.rmSync(path.join(outside, 'anywhere'), { force: true });
    }
  });

  it('makes nothing writable for project_roots without workspaceRoots, not even cwd, as the reference', async () => {
    for (const workspaceRoots of [[], undefined]) {
      const run = await sandboxed('echo x > unrooted && echo wrote || echo denied', {
        sandbox: { ...workspaceWrite(workspace), workspaceRoots },
      });
      expect(run.output).toContain('Read-only file system');
      expect(run.output).toContain('denied');
      expect(fs.existsSync(path.join(workspace, 'unrooted'))).toBe(false);
    }
  });

  it("keeps the server's own code read-only when a writable root holds it, and the rest of that root writable", async () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
    const probe = `.sandbox-probe-${process.pid}`;
    // New files only: where the protection fails, nothing the server runs is changed (and they are removed).
    const planted = ['dist', 'node_modules/undici'].map((dir) => path.join(dir, `.planted-by-a-child-${process.pid}`));
    const script = [
      `echo x > ${probe} && echo root-writable`,
      `rm -f ${probe}`,
      ...planted.map((file) => `echo x > ${file} || echo denied`),
    ].join('; ');
    const sandbox = managedPolicy(root, [special('root', 'read'), special('project_roots', 'write')]);
    try {
      const run = await sandboxed(script, { sandbox, cwd: pathToFileURL(root).href });
      expect(run.output).toContain('root-writable');
      expect(run.output.match(/Read-only file system/g)).toHaveLength(2);
      for (const file of planted) expect(fs.existsSync(path.join(root, file))).toBe(false);
    } finally {
      for (const file of planted) fs.rmSync(path.join(root, file), { force: true });
    }
  });

  it('confines a PTY shell too', async () => {
    const processId = `sb${++counter}`;
    await server.request('process/start', {
      processId,
      argv: ['bash', '-c', `tty >/dev/null && echo is-a-tty; touch ${outside}/pty-escape; echo done`],
      cwd: workspace,
      env: BASE_ENV,
      tty: true,
      sandbox: workspaceWrite(workspace),
    });
    await server.waitClosed(processId);
    const output = server.output(processId).toString();
    expect(output).toContain('is-a-tty');
    expect(output).toContain('Read-only file system');
    expect(fs.existsSync(path.join(outside, 'pty-escape'))).toBe(false);
  });

  it('kills the whole confined tree on terminate, grandchildren included', async () => {
    const processId = `sb${++counter}`;
    await server.request('process/start', {
      processId,
      argv: ['bash', '-c', 'sleep 60.301 & setsid sleep 60.302 & echo up; wait'],
      cwd: workspace,
      env: BASE_ENV,
      tty: false,
      sandbox: workspaceWrite(workspace),
    });
    await server.waitFor((m) => m.method === 'process/output' && m.params.processId === processId);
    // `up` may come out before the background jobs have exec'd sleep.
    const inside = [...(await waitFound('60.301', 'sleep')), ...(await waitFound('60.302', 'sleep'))];
    expect(inside).toHaveLength(2);
    await server.request('process/terminate', { processId });
    await server.waitClosed(processId);
    expect(await waitDead(inside)).toEqual([]);
  });

  it('refuses policy features it cannot enforce, naming them, and runs nothing', async () => {
    const policy = workspaceWrite(workspace);
    (policy.permissions.file_system.entries as object[]).push({ path: { type: 'special', value: { kind: 'home' } }, access: 'write' });
    const error = await server.error('process/start', {
      processId: 'refused',
      argv: ['true'],
      cwd: workspace,
      env: BASE_ENV,
      tty: false,
      sandbox: policy,
    });
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(/^sandbox is not supported: a file_system entry of path .*home/);
  });

  it('refuses a policy whose writable root holds the bwrap it uses: a child could replace it, and the next start would run unconfined', async () => {
    const bin = path.join(workspace, 'bin');
    fs.mkdirSync(bin, { recursive: true });
    const bwrap = path.join(bin, 'bwrap');
    fs.copyFileSync(findBwrap(undefined)!, bwrap);
    fs.chmodSync(bwrap, 0o755);
    const own = await ServerProcess.started(['--bwrap', bwrap]);
    servers.push(own);
    const error = await own.error('process/start', {
      processId: 'replacer',
      argv: ['bash', '-c', `echo replaced > ${bwrap}`],
      cwd: workspace,
      env: BASE_ENV,
      tty: false,
      sandbox: workspaceWrite(workspace),
    });
    expect(error.code).toBe(-32602);
    expect(error.message).toContain(`which holds ${fs.realpathSync(bwrap)}, a program this server runs outside the sandbox`);
    expect(fs.readFileSync(bwrap).subarray(0, 4).toString('latin1')).toBe('\x7fELF');
    fs.rmSync(bin, { recursive: true });
  });

  it('answers -32603 when bwrap is missing, instead of running unconfined', async () => {
    const noBwrap = await ServerProcess.started([], { ...process.env, PATH: '/nonexistent' });
    servers.push(noBwrap);
    const error = await noBwrap.error('process/start', {
      processId: 'x',
      argv: ['touch', `${outside}/unconfined`],
      cwd: workspace,
      env: BASE_ENV,
      tty: false,
      sandbox: workspaceWrite(workspace),
    });
    expect(error).toEqual({ code: -32603, message: 'sandbox unavailable: bwrap not found (install bubblewrap)' });
    expect(fs.existsSync(path.join(outside, 'unconfined'))).toBe(false);
    // Said up front too: in initialize's environmentInfo and in environment/info.
    const initialized = noBwrap.messages.find((message) => message.result?.environmentInfo)!;
    const unavailable = { available: false, type: 'linuxSeccomp', reason: 'sandbox unavailable: bwrap not found (install bubblewrap)' };
    expect(initialized.result.environmentInfo.sandbox).toEqual(unavailable);
    expect((await noBwrap.request('environment/info', {})).sandbox).toEqual(unavailable);
    expect((await server.request('environment/info', {})).sandbox).toEqual({ available: true, type: 'linuxSeccomp' });
  });

  it('refuses to start with a --bwrap that is not an executable file, and names it once it is gone', async () => {
    const refused = spawnSync(process.execPath, [CLI, '--bwrap', '/nonexistent/bwrap'], { encoding: 'utf8', input: '' });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('--bwrap: /nonexistent/bwrap is not an executable file');
    const bwrap = path.join(workspace, 'given-bwrap');
    fs.copyFileSync(findBwrap(undefined)!, bwrap);
    fs.chmodSync(bwrap, 0o755);
    const own = await ServerProcess.started(['--bwrap', bwrap]);
    servers.push(own);
    fs.rmSync(bwrap);
    const message = `sandbox unavailable: --bwrap ${bwrap} is not an executable file`;
    const start = { processId: 'x', argv: ['touch', `${outside}/unconfined`], cwd: workspace, env: BASE_ENV, tty: false };
    expect(await own.error('process/start', { ...start, sandbox: workspaceWrite(workspace) })).toEqual({ code: -32603, message });
    expect(fs.existsSync(path.join(outside, 'unconfined'))).toBe(false);
    expect((await own.request('environment/info', {})).sandbox).toEqual({ available: false, type: 'linuxSeccomp', reason: message });
  });
});
