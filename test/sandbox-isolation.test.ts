/**
 * Escapes that go around the mounts rather than through them: privileges a
 * server running as root would hand down, host namespaces, the child's
 * environment exposed or reaching the unconfined bwrap, and protected paths that are
 * missing or reached through a symlink.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bwrapArgs, findBwrap } from '../src/server/sandbox/bwrap.js';
import { protectReadOnly } from '../src/server/sandbox/protected-paths.js';
import { waitFound } from './support/proc.js';
import { entriesOnceReleased, sandboxFixture, workspaceWrite } from './support/sandbox-policy.js';
import { BASE_ENV } from './support/server-process.js';

const hasBwrap = findBwrap(undefined) !== undefined;
const fixture = sandboxFixture('isolation-test');
const { freshWorkspace } = fixture;

function startParams(workspace: string, script: string, env: Record<string, string> = BASE_ENV) {
  return {
    processId: `iso${fixture.next()}`,
    argv: ['bash', '-c', script],
    cwd: pathToFileURL(workspace).href,
    env,
    tty: false,
    sandbox: workspaceWrite(workspace),
  };
}

async function sandboxed(workspace: string, script: string, env?: Record<string, string>): Promise<string> {
  const params = startParams(workspace, script, env);
  await fixture.server.request('process/start', params);
  await fixture.server.waitClosed(params.processId);
  return fixture.server.output(params.processId).toString();
}

describe.skipIf(!hasBwrap)('sandbox isolation (bwrap)', () => {
  it('gives the child no capabilities and its own IPC namespace, so it cannot remount / or reach host IPC', async () => {
    const output = await sandboxed(
      freshWorkspace(),
      'grep -E "^Cap(Eff|Bnd)" /proc/self/status; readlink /proc/self/ns/ipc; mount -o remount,bind,rw / 2>/dev/null && echo REMOUNTED',
    );
    expect(output).toContain('CapEff:\t0000000000000000');
    expect(output).toContain('CapBnd:\t0000000000000000');
    expect(output).toContain('ipc:[');
    expect(output).not.toContain(fs.readlinkSync('/proc/self/ns/ipc'));
    expect(output).not.toContain('REMOUNTED');
  });

  it("hands the child its environment through bwrap's, which only its owner can read, never its command line; the loader's variables only inside", async () => {
    const workspace = freshWorkspace();
    const env = { ...BASE_ENV, ISOLATION_MARK: 'secret-isolation-value', LD_LIBRARY_PATH: '/nonexistent-isolation-lib' };
    const params = startParams(workspace, 'echo "mark=$ISOLATION_MARK ld=$LD_LIBRARY_PATH"; exec sleep 60.411', env);
    await fixture.server.request('process/start', params);
    // Its mark, not just any output: bash there may print ~/.bashrc's complaints first (see the README).
    const printed = (m: { method?: string; params?: { processId?: string; chunk?: string } }) =>
      m.method === 'process/output' &&
      m.params?.processId === params.processId &&
      Buffer.from(m.params.chunk ?? '', 'base64').includes('mark=');
    await fixture.server.waitFor(printed);
    const [bwrap] = await waitFound('60.411', findBwrap(undefined));
    expect(bwrap).toBeDefined();
    // Any local user may read a command line (`ps`); an environment, only its owner.
    expect(fs.readFileSync(`/proc/${bwrap}/cmdline`, 'latin1')).not.toContain('secret-isolation-value');
    expect(fs.statSync(`/proc/${bwrap}/environ`).mode & 0o077).toBe(0);
    expect(fs.readFileSync(`/proc/${bwrap}/environ`, 'latin1')).not.toContain('LD_LIBRARY_PATH');
    await fixture.server.request('process/terminate', { processId: params.processId });
    await fixture.server.waitClosed(params.processId);
    expect(fixture.server.output(params.processId).toString()).toContain('mark=secret-isolation-value ld=/nonexistent-isolation-lib');
  });

  it("keeps a restricted network's child from the host's Unix sockets, as the reference's filter does", async () => {
    const socketPath = path.join(fixture.base, 'host.sock');
    const host = net.createServer((socket) => socket.end('from-host\n'));
    await new Promise<void>((resolve) => host.listen(socketPath, resolve));
    const client = [
      'use Socket;',
      'socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die "socket: $!";',
      `connect($s, pack_sockaddr_un("${socketPath}")) ? print scalar <$s> : print "refused: $!\\n";`,
      'socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, 0) and print "pair works\\n";',
      // A datagram socket could send to a host socket by its path (sendmsg is allowed, for pairs).
      'socket(my $d, PF_UNIX, SOCK_DGRAM, 0) ? print "datagram made\\n" : print "datagram refused: $!\\n";',
      // SOCK_RAW (3) on AF_UNIX is a datagram socket in the kernel's eyes.
      'socket(my $r, PF_UNIX, 3, 0) ? print "raw made\\n" : print "raw refused: $!\\n";',
      'socket(my $q, PF_UNIX, SOCK_SEQPACKET, 0) and print "seqpacket works\\n";',
    ].join('\n');
    try {
      const workspace = freshWorkspace();
      fs.writeFileSync(path.join(workspace, 'client.pl'), client);
      const restricted = await sandboxed(workspace, 'perl client.pl');
      expect(restricted).toContain('refused: Operation not permitted');
      expect(restricted).toContain('pair works');
      expect(restricted).toContain('datagram refused: Operation not permitted');
      expect(restricted).toContain('raw refused: Operation not permitted');
      expect(restricted).toContain('seqpacket works');
      const params = { ...startParams(workspace, 'perl client.pl'), sandbox: workspaceWrite(workspace, 'enabled') };
      await fixture.server.request('process/start', params);
      await fixture.server.waitClosed(params.processId);
      expect(fixture.server.output(params.processId).toString()).toContain('from-host');
    } finally {
      host.close();
    }
  });

  it("keeps the dynamic loader's variables from perl, which installs the filter: code they name runs only after it", async () => {
    // LD_DEBUG shows which programs the loader started with them: a preloaded library would run in the same ones.
    const output = await sandboxed(freshWorkspace(), 'exec /bin/true', { ...BASE_ENV, LD_DEBUG: 'libs' });
    expect(output).toMatch(/initialize program: \S*bash/);
    expect(output).not.toMatch(/initialize program: \S*perl/);
    expect(output).not.toMatch(/initialize program: \S*bwrap/);
  });

  it("keeps a server's code from being moved aside: the directories above it cannot be renamed, the rest stays writable", () => {
    // A server installed at work/app/node_modules/srv (its code there, read-only): the child may write
    // anywhere else, but renaming a directory above the code would let it put another in its place.
    const workspace = freshWorkspace();
    const code = path.join(workspace, 'app', 'node_modules', 'srv');
    fs.mkdirSync(code, { recursive: true });
    fs.writeFileSync(path.join(code, 'main.js'), 'original\n');
    const real = fs.realpathSync(workspace);
    const confinement = { writable: [real], readOnly: [], noNetwork: false, ...protectReadOnly([real], [], [fs.realpathSync(code)]) };
    const script = [
      'mv app app.moved && echo MOVED-APP',
      'mv app/node_modules app/nm.moved && echo MOVED-NODE-MODULES',
      'mv app/node_modules/srv app/srv.moved && echo MOVED-CODE',
      'echo evil > app/node_modules/srv/main.js && echo WROTE-CODE',
      'echo fine > app/node_modules/other && echo WROTE-BESIDE',
    ].join('; ');
    const bwrap = findBwrap(undefined)!;
    const run = spawnSync(bwrap, [...bwrapArgs(confinement, real, false), '/bin/sh', '-c', script], { encoding: 'utf8' });
    expect(run.stdout).toBe('WROTE-BESIDE\n');
    // Both directories above are mount points; the code's own mv can only copy it (and not remove it).
    expect(run.stderr.match(/Device or resource busy/g)).toHaveLength(2);
    expect(fs.readFileSync(path.join(code, 'main.js'), 'utf8')).toBe('original\n');
  });

  it('pins nothing inside a read-only path: what the policy keeps read-only above the code stays so', () => {
    const workspace = freshWorkspace();
    const code = path.join(workspace, 'ro', 'app', 'srv');
    fs.mkdirSync(code, { recursive: true });
    const [real, readOnly] = [workspace, path.join(workspace, 'ro')].map((dir) => fs.realpathSync(dir));
    const confinement = {
      writable: [real],
      readOnly: [readOnly],
      noNetwork: false,
      ...protectReadOnly([real], [readOnly], [fs.realpathSync(code)]),
    };
    expect(confinement.pinned).toEqual([]);
    const script = ['touch ro/app/evil && echo WROTE-UNDER-READ-ONLY', 'touch beside && echo WROTE-BESIDE'];
    const bwrap = findBwrap(undefined)!;
    const run = spawnSync(bwrap, [...bwrapArgs(confinement, real, false), '/bin/sh', '-c', script.join('; ')], { encoding: 'utf8' });
    expect(run.stdout).toBe('WROTE-BESIDE\n');
    expect(fs.readdirSync(path.join(workspace, 'ro', 'app'))).toEqual(['srv']);
  });

  it('keeps missing protected paths from being created, and leaves nothing behind', async () => {
    const workspace = freshWorkspace();
    const output = await sandboxed(
      workspace,
      'mkdir -p .git/hooks && echo MADE-GIT; mkdir .codex && echo MADE-CODEX; touch .aws && echo MADE-AWS; ls -A; echo listed',
    );
    expect(output).not.toMatch(/MADE-/);
    expect(output).toMatch(/\.agents\n\.aws\n\.codex\n\.git\nlisted/); // read-only stand-ins inside
    expect(await entriesOnceReleased(workspace, [])).toEqual([]);
  });

  it('keeps the stand-ins whole for starts in quick succession and side by side, while earlier ones are removed', async () => {
    const workspace = freshWorkspace();
    const probe =
      'for p in .git .codex .agents .aws; do [ -d $p ] && touch $p/x 2>/dev/null && echo "WROTE $p"; [ -d $p ] || echo "MISSING $p"; done; echo checked';
    const outputs: string[] = [];
    for (let i = 0; i < 12; i++) outputs.push(await sandboxed(workspace, probe));
    for (let round = 0; round < 3; round++) outputs.push(...(await Promise.all([0, 1, 2, 3].map(() => sandboxed(workspace, probe)))));
    // (bash under the network filter also reads ~/.bashrc, whatever that prints: see the README)
    expect(outputs.filter((output) => /WROTE|MISSING/.test(output) || !output.endsWith('checked\n'))).toEqual([]);
    expect(await entriesOnceReleased(workspace, [])).toEqual([]);
  });

  it("leaves a user's empty .git alone, and covers it read-only meanwhile", async () => {
    const workspace = freshWorkspace();
    fs.mkdirSync(path.join(workspace, '.git'));
    const output = await sandboxed(workspace, 'mkdir .git/hooks && echo MADE');
    expect(output).toContain('Read-only file system');
    expect(await entriesOnceReleased(workspace, ['.git'])).toEqual(['.git']);
    expect(fs.readdirSync(path.join(workspace, '.git'))).toEqual([]);
  });

  it('refuses a policy whose protected path crosses a symlink in the workspace, and runs nothing', async () => {
    const workspace = freshWorkspace();
    fs.mkdirSync(path.join(workspace, 'gitdir'));
    fs.symlinkSync('gitdir', path.join(workspace, '.git'));
    const error = await fixture.server.error('process/start', startParams(workspace, 'rm .git && mkdir .git && touch RAN'));
    expect(error.code).toBe(-32602);
    expect(error.message).toContain(`crosses the writable symlink ${path.join(workspace, '.git')}`);
    expect(fs.existsSync(path.join(workspace, 'RAN'))).toBe(false);
    expect(fs.lstatSync(path.join(workspace, '.git')).isSymbolicLink()).toBe(true);
  });
});
