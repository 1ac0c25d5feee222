/** envPolicy and the rest of what Codex sends on process/start, through the real CLI (PROTOCOL.md §3.2). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerProcess } from './support/server-process.js';
import type { EnvPolicy } from '../src/server/process/env-policy.js';
import { policy, REQUEST_ENV, SERVER_ENV } from './support/env-policy-cases.js';

/** What Codex 0.169 sends beside the process (PROTOCOL-V2.md §3). */
const CODEX_EXTRAS = {
  metadata: { threadId: '01a2b3c4-d5e6-4f70-8192-a3b4c5d6e7f8', toolCallId: 'call_1' }, // a UUID, as Codex sends
  sandbox: null,
  enforceManagedNetwork: false,
  managedNetwork: null,
};

let server: ServerProcess;
let counter = 0;
beforeAll(async () => {
  server = await ServerProcess.started([], SERVER_ENV);
});
afterAll(() => server.dispose());

async function childEnv(envPolicy: object, tty: boolean, extra: object = {}): Promise<string[]> {
  const processId = `env${++counter}`;
  await server.request('process/start', { processId, argv: ['/usr/bin/env'], cwd: '/', env: REQUEST_ENV, tty, envPolicy, ...extra });
  await server.waitClosed(processId);
  const lines = server.output(processId).toString().split(/\r?\n/).filter(Boolean);
  return lines.filter((line) => !line.startsWith('SHELL=')); // PTY mode adds SHELL (§3.2); all comes sorted, as from the reference
}

describe.each([false, true])('envPolicy (tty: %s)', (tty) => {
  it('inherit all drops *KEY*/*SECRET*/*TOKEN* by default, and env wins', async () => {
    expect(await childEnv(policy({}), tty)).toEqual(['FOO_BAR=x', 'FROM_ENV=1', 'HOME=/root', 'OTHER=o', 'PATH=/bin']);
  });

  it('ignoreDefaultExcludes, exclude and set', async () => {
    expect(await childEnv(policy({ ignoreDefaultExcludes: true, exclude: ['OTHER'], set: { S: 'v' } }), tty)).toEqual([
      'FOO_BAR=x',
      'FROM_ENV=1',
      'HOME=/root',
      'MY_SECRET=s',
      'MY_TOKEN=t',
      'PATH=/bin',
      'S=v',
    ]);
  });

  it('inherit core', async () => {
    expect(await childEnv(policy({ inherit: 'core' }), tty)).toEqual(['FROM_ENV=1', 'HOME=/root', 'PATH=/bin']);
  });

  it('inherit none with includeOnly, the request env laid on top afterwards', async () => {
    expect(await childEnv(policy({ inherit: 'none', set: { S: 'v' }, includeOnly: ['S', 'FROM*'] }), tty)).toEqual([
      'FROM_ENV=1',
      'PATH=/bin',
      'S=v',
    ]);
  });

  it("takes inherit in serde's map form too, as both references do", async () => {
    expect(await childEnv(policy({ inherit: { core: null } as unknown as EnvPolicy['inherit'] }), tty)).toEqual(
      await childEnv(policy({ inherit: 'core' }), tty),
    );
  });

  it('passes a variable named __proto__ like any other, from env and from set', async () => {
    const processId = `env${++counter}`;
    const set = JSON.parse('{"__proto__":"p","constructor":"c"}') as Record<string, string>;
    const env = JSON.parse('{"__proto__":"q"}') as Record<string, string>;
    await server.request('process/start', {
      processId,
      argv: ['/usr/bin/env'],
      arg0: 'env', // through perl (src/server/process/perl.ts), which builds the environment again
      cwd: '/',
      env,
      tty,
      envPolicy: policy({ inherit: 'none', set }),
    });
    await server.waitClosed(processId);
    const lines = server
      .output(processId)
      .toString()
      .split(/\r?\n/)
      .filter((line) => line && !line.startsWith('SHELL='));
    expect(lines).toEqual(['__proto__=q', 'constructor=c']);
    const badEnv = JSON.parse('{"__proto__":5}') as Record<string, string>;
    expect(await server.error('process/start', { processId: `${processId}b`, argv: ['true'], cwd: '/', env: badEnv, tty })).toEqual({
      code: -32602,
      message: 'env.__proto__: invalid type: integer `5`, expected a string',
    });
  });

  it("accepts Codex's own start (metadata, sandbox null, no managed network)", async () => {
    const codexPolicy = policy({ ignoreDefaultExcludes: true, exclude: ['CODEX_VERSION'] });
    expect(await childEnv(codexPolicy, tty, CODEX_EXTRAS)).toContain('MY_SECRET=s');
  });
});

describe('envPolicy and Codex members that are refused', () => {
  it('names the missing member or the unknown inherit value', async () => {
    expect(
      await server.error('process/start', {
        processId: 'bad1',
        argv: ['true'],
        cwd: '/',
        env: {},
        tty: false,
        envPolicy: { inherit: 'all' },
      }),
    ).toEqual({
      code: -32602,
      message: 'envPolicy: missing field `ignoreDefaultExcludes`',
    });
    expect(
      await server.error('process/start', {
        processId: 'bad2',
        argv: ['true'],
        cwd: '/',
        env: {},
        tty: false,
        envPolicy: policy({ inherit: 'some' as EnvPolicy['inherit'] }),
      }),
    ).toEqual({
      code: -32602,
      message: 'envPolicy.inherit: unknown variant `some`, expected one of `core`, `all`, `none`',
    });
    // In the map form, the value under the name is shown as generation 1 shows values (Codex 0.134).
    const start = (inherit: unknown) => ({
      processId: 'bad3',
      argv: ['true'],
      cwd: '/',
      env: {},
      tty: false,
      envPolicy: policy({ inherit } as never),
    });
    expect(await server.error('process/start', start({ none: 5 }))).toEqual({
      code: -32602,
      message: 'envPolicy.inherit.none: invalid type: integer `5`, expected unit',
    });
    expect((await server.error('process/start', start({ all: 1.5 }))).message).toBe(
      'envPolicy.inherit.all: invalid type: floating point `1.5`, expected unit',
    );
  });

  it.each([
    [
      'sandbox',
      {
        permissions: {
          type: 'managed',
          file_system: { type: 'restricted', entries: [{ path: { type: 'special', value: { kind: 'home' } }, access: 'write' }] },
          network: 'restricted',
        },
        windowsSandboxLevel: 'disabled',
      },
    ],
    ['enforceManagedNetwork', true],
    ['managedNetwork', { allowedDomains: [] }],
    ['networkProxy', { port: 1 }],
    ['shellSnapshot', { shell: 'bash' }],
    ['credentialProviders', [{ name: 'x' }]],
  ])('refuses %s that asks for something, and runs nothing', async (member, value) => {
    const processId = `refused-${member}`;
    const error = await server.error('process/start', {
      processId,
      argv: ['/usr/bin/touch', `/tmp/exec-server-refused-${process.pid}`],
      cwd: '/',
      env: {},
      tty: false,
      [member]: value,
    });
    expect(error.code).toBe(-32602);
    expect(error.message.startsWith(`${member} is not supported: `)).toBe(true);
    expect(await server.error('process/read', { processId })).toMatchObject({ code: -32600 }); // no entry was made
  });

  it('runs a start whose sandbox is explicitly disabled', async () => {
    expect(
      await childEnv(policy({ inherit: 'none' }), false, {
        sandbox: { permissions: { type: 'disabled' }, windowsSandboxLevel: 'disabled' },
      }),
    ).toEqual(['FROM_ENV=1', 'PATH=/bin']);
  });
});
