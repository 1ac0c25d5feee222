/** The setting of PROTOCOL.md §3.2's envPolicy measurements, shared by the unit and CLI tests. */
import type { EnvPolicy } from '../../src/server/process/env-policy.js';

/** The server's own environment in the reference measurements (`env -i PATH=… HOME=… MY_SECRET=s …`). */
export const SERVER_ENV = { PATH: '/usr/bin:/bin', HOME: '/root', MY_SECRET: 's', MY_TOKEN: 't', OTHER: 'o', FOO_BAR: 'x' };
/** The request's own `env`, laid over what the policy builds. */
export const REQUEST_ENV = { FROM_ENV: '1', PATH: '/bin' };

/** `inherit: all` with the defaults, changed by `overrides`. */
export const policy = (overrides: Partial<EnvPolicy>): EnvPolicy => ({
  inherit: 'all',
  ignoreDefaultExcludes: false,
  exclude: [],
  set: {},
  includeOnly: [],
  ...overrides,
});
