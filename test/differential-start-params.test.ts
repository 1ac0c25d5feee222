/**
 * process/start's generation-2 members beside Codex 0.169.0 when installed:
 * `metadata` (a UUID `threadId`, a `toolCallId`; serde also takes the
 * struct as a sequence), a NUL in the environment, and the sandbox policies
 * that confine nothing here (disabled, external). Our texts name the
 * field (`metadata: …`); the prefix is dropped before comparing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Arenas, arenas } from './support/arenas.js';

let contest: Arenas;
let started = 0;
const UUID = '01234567-89ab-cdef-0123-456789abcdef';
const CHARACTER = 'invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-]';

beforeAll(async () => {
  contest = await arenas('0.169.0', () => undefined);
  for (const { server } of contest.list) await server.request('environment/info', null);
});

afterAll(() => contest.dispose());

/** Without our field prefix, which the reference does not give. */
const unprefixed = (answer: Record<string, unknown>) =>
  typeof answer.message === 'string' ? { ...answer, message: answer.message.replace(/^metadata: /, '') } : answer;

const start = (extra: Record<string, unknown>) =>
  contest.both(
    'process/start',
    { processId: `p${++started}`, argv: ['true'], cwd: 'file:///tmp', env: {}, tty: false, ...extra },
    unprefixed,
  );

const refused = (message: string) => ({ code: -32602, message });

describe('process/start metadata and environment, side by side with the reference', () => {
  it('takes metadata that is absent, empty, a UUID in any of its forms, or a sequence of the fields', async () => {
    for (const metadata of [
      null,
      {},
      [],
      [null],
      [UUID, 'call'],
      { other: 1 },
      { threadId: UUID },
      { threadId: UUID.replaceAll('-', '') },
    ]) {
      expect(await start({ metadata }), JSON.stringify(metadata)).toMatchObject({ sandboxType: 'none' });
    }
    expect(await start({ metadata: { threadId: `urn:uuid:${UUID}`, toolCallId: 'call' } })).toMatchObject({ sandboxType: 'none' });
    expect(await start({ metadata: { threadId: `{${UUID}}` } })).toMatchObject({ sandboxType: 'none' });
  });

  it('refuses metadata of the wrong shape, and a threadId that is not a UUID, in the uuid crate words', async () => {
    expect(await start({ metadata: 5 })).toEqual(refused('invalid type: number, expected struct ExecMetadata'));
    expect(await start({ metadata: [UUID, 'c', 'x'] })).toEqual(refused('invalid length 3, expected fewer elements in array'));
    expect(await start({ metadata: { toolCallId: 5 } })).toEqual(refused('invalid type: number, expected a string'));
    expect(await start({ metadata: { threadId: 't' } })).toEqual(refused(`${CHARACTER}, found \`t\` at 1`));
    expect(await start({ metadata: { threadId: `${UUID}x` } })).toEqual(refused(`${CHARACTER}, found \`x\` at 37`));
    expect(await start({ metadata: { threadId: '0000' } })).toEqual(
      refused('invalid length: expected length 32 for simple format, found 4'),
    );
    expect(await start({ metadata: { threadId: '0123-4567' } })).toEqual(refused('invalid group count: expected 5, found 2'));
    expect(await start({ metadata: { threadId: UUID.slice(0, -1) } })).toEqual(
      refused('invalid group length in group 4: expected 12, found 11'),
    );
    expect(await start({ metadata: { threadId: '0123456-789ab-cdef-0123-456789abcdef' } })).toEqual(
      refused('invalid group length in group 0: expected 8, found 7'),
    );
  });

  it('words a NUL in the environment as generation 2 does, envPolicy.set included', async () => {
    const nul = { code: -32603, message: 'data provided contains a nul byte' };
    expect(await start({ env: { A: 'x\u0000y' } })).toEqual(nul);
    const envPolicy = (set: Record<string, string>) => ({
      inherit: 'none',
      ignoreDefaultExcludes: false,
      exclude: [],
      set,
      includeOnly: [],
    });
    expect(await start({ envPolicy: envPolicy({ A: 'x\u0000y' }) })).toEqual(nul);
    expect(await start({ envPolicy: envPolicy({ 'A\u0000': 'y' }) })).toEqual(nul);
  });

  it('names the member serde meets first: in the order they came, a missing one after the rest', async () => {
    const fieldless = (answer: Record<string, unknown>) =>
      typeof answer.message === 'string'
        ? { ...answer, message: answer.message.replace(/^(envPolicy[\w.]*|afterSeq|processId|enforceManagedNetwork): /, '') }
        : answer;
    const policy = (envPolicy: unknown) =>
      contest.both(
        'process/start',
        { processId: `p${++started}`, argv: ['true'], cwd: 'file:///tmp', env: {}, tty: false, envPolicy },
        fieldless,
      );
    expect(await policy({ inherit: 'all', exclude: 'x' })).toEqual(refused('invalid type: string "x", expected a sequence'));
    expect(await policy({ inherit: 'all', includeOnly: [1] })).toEqual(refused('invalid type: number, expected a string'));
    expect(await policy({ inherit: 'core', extra: 1 })).toEqual(refused('missing field `ignoreDefaultExcludes`'));
    expect(await policy(5)).toEqual(refused('invalid type: number, expected struct ExecEnvPolicy'));
    expect(await contest.both('process/read', { afterSeq: -1, processId: 5 }, fieldless)).toEqual(refused('invalid number'));
    for (const [value, what] of [
      [null, 'null'],
      ['x', 'string "x"'],
    ] as const) {
      const params = { processId: `p${++started}`, argv: ['true'], cwd: 'file:///tmp', env: {}, tty: false, enforceManagedNetwork: value };
      expect(await contest.both('process/start', params, fieldless)).toEqual(refused(`invalid type: ${what}, expected a boolean`));
    }
    expect(await contest.both('process/read', { processId: 5, afterSeq: -1 }, fieldless)).toEqual(
      refused('invalid type: number, expected a string'),
    );
  });

  it('answers linuxSeccomp to any policy sent, disabled or external too, and checks its network as the reference', async () => {
    const sandbox = (permissions: object) => ({
      permissions,
      cwd: 'file:///tmp',
      workspaceRoots: ['file:///tmp'],
      windowsSandboxLevel: 'disabled',
    });
    expect(await start({ sandbox: sandbox({ type: 'disabled' }) })).toMatchObject({ sandboxType: 'linuxSeccomp' });
    expect(await start({ sandbox: sandbox({ type: 'external', network: 'restricted' }) })).toMatchObject({
      sandboxType: 'linuxSeccomp',
    });
    expect(await start({ sandbox: null })).toMatchObject({ sandboxType: 'none' });
    expect(await start({ sandbox: sandbox({ type: 'external' }) })).toEqual(refused('missing field `network`'));
    expect(await start({ sandbox: sandbox({ type: 'external', network: 'bogus' }) })).toEqual(
      refused('unknown variant `bogus`, expected `restricted` or `enabled`'),
    );
  });

  it.skipIf(process.arch !== 'x64')('refuses a PTY start of a binary whose loader is missing, as the reference does', async () => {
    // /bin/true naming a loader that is not there (the same length, one letter changed).
    const binary = fs.readFileSync(fs.realpathSync('/bin/true'));
    const loader = binary.indexOf('/lib64/ld-linux-x86-64.so.2');
    fs.mkdirSync(dir, { recursive: true });
    const broken = path.join(dir, 'no-loader');
    binary.write('X', loader + 1, 'latin1');
    fs.writeFileSync(broken, binary, { mode: 0o755 });
    const pty = (extra: Record<string, unknown>) => start({ tty: true, cwd: `file://${dir}`, env: { PATH: '/usr/bin:/bin' }, ...extra });
    expect(loader).toBeGreaterThan(0);
    expect(await pty({ argv: [broken] })).toEqual({ code: -32603, message: 'No such file or directory (os error 2)' });
    expect(await pty({ argv: ['/bin/true'] })).toMatchObject({ processId: expect.any(String) }); // a loader that is there
  });
});

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'start-params-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
