import { describe, expect, it } from 'vitest';
import { buildEnvironment, globMatcher, type EnvPolicy } from '../../../../src/server/process/env-policy.js';
import { policy, REQUEST_ENV, SERVER_ENV } from '../../../support/env-policy-cases.js';

const build = (overrides: Partial<EnvPolicy>, serverEnv: NodeJS.ProcessEnv = SERVER_ENV) => ({
  ...buildEnvironment(policy(overrides), serverEnv, REQUEST_ENV),
});

describe('buildEnvironment: the cases measured on the reference (both generations)', () => {
  it('inherit all with the default excludes drops the secrets', () => {
    expect(build({})).toEqual({ FOO_BAR: 'x', FROM_ENV: '1', HOME: '/root', OTHER: 'o', PATH: '/bin' });
  });

  it('ignoreDefaultExcludes keeps them; exclude and set apply', () => {
    expect(build({ ignoreDefaultExcludes: true, exclude: ['OTHER'], set: { S: 'v' } })).toEqual({
      FOO_BAR: 'x',
      FROM_ENV: '1',
      HOME: '/root',
      MY_SECRET: 's',
      MY_TOKEN: 't',
      PATH: '/bin',
      S: 'v',
    });
  });

  it('inherit core keeps only the core variables', () => {
    expect(build({ inherit: 'core' })).toEqual({ FROM_ENV: '1', HOME: '/root', PATH: '/bin' });
  });

  it('inherit core takes the core names in any ASCII case, LC_CTYPE among them, and no other LC_ variable', () => {
    // Measured on Codex 0.169 with this server environment (its PATH aside).
    const serverEnv = { PATH: '/usr/bin', HOME: '/root', Home: 'mixed', LC_CTYPE: 'C', lc_ctype: 'c', lc_all: 'a', LC_MESSAGES: 'm' };
    const more = { Temp: 't', tmp: 't2', path: 'lower', User: 'u', lang: 'l', shell: 's', tmpdir: 'td', USERNAME: 'un', ſhell: 'long s' };
    const { FROM_ENV: _request, PATH: _path, ...inherited } = build({ inherit: 'core' }, { ...serverEnv, ...more });
    expect(Object.keys(inherited).sort()).toEqual([
      'HOME',
      'Home',
      'LC_CTYPE',
      'Temp',
      'User',
      'lang',
      'lc_all',
      'lc_ctype',
      'path',
      'shell',
      'tmp',
      'tmpdir',
    ]);
  });

  it('includeOnly filters before the request env is laid on top', () => {
    expect(build({ inherit: 'none', set: { S: 'v' }, includeOnly: ['S', 'FROM*'] })).toEqual({ FROM_ENV: '1', PATH: '/bin', S: 'v' });
  });
});

describe('buildEnvironment: edges', () => {
  it('matches the default excludes case-insensitively, anywhere in the name (KEYBOARD too)', () => {
    const env = build({}, { keyboard: 'k', Api_Key: 'a', my_token_x: 't', secretive: 's', KEEP: 'k' });
    expect(Object.keys(env).sort()).toEqual(['FROM_ENV', 'KEEP', 'PATH']);
  });

  it('lets the request env win over set, and set add back what exclude dropped', () => {
    const env = buildEnvironment(policy({ exclude: ['HOME'], set: { HOME: '/set', PATH: '/set' } }), SERVER_ENV, { PATH: '/request' });
    expect(env.HOME).toBe('/set');
    expect(env.PATH).toBe('/request');
  });

  it('treats a variable named __proto__ as a name, not a prototype', () => {
    const env = buildEnvironment(policy({ set: JSON.parse('{"__proto__":"p"}') }), {}, {});
    expect(Object.keys(env)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(env, '__proto__')?.value).toBe('p');
  });

  it('skips undefined values of the server environment', () => {
    expect(build({ inherit: 'all' }, { DEFINED: 'd', GONE: undefined })).toEqual({ DEFINED: 'd', FROM_ENV: '1', PATH: '/bin' });
  });
});

describe('globMatcher', () => {
  it.each([
    ['FOO*', 'foo_bar', true],
    ['*BAR', 'FOO_BAR', true],
    ['F*R', 'FOOBAR', true],
    ['FOO', 'FOOBAR', false],
    ['A.B', 'AxB', false],
    ['(x)', '(X)', true],
    ['*', '', true],
    ['a*b*c', 'aXXbYYc', true],
    ['a*b*c', 'aXXbYY', false],
    // `?` is one character, `[…]` literal, as Codex's envPolicy matches them (checked against both references).
    ['LAN?', 'LANG', true],
    ['?THER', 'OTHER', true],
    ['H?ME', 'HOME', true],
    ['LAN?', 'LAN', false],
    ['[O]THER', 'OTHER', false],
    ['[O]THER', '[O]THER', true],
  ])('%s matches %s: %s', (pattern, name, expected) => {
    expect(globMatcher(pattern)(name)).toBe(expected);
  });
});
