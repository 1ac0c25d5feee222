/**
 * `envPolicy` (PROTOCOL.md §3.2): how the child's environment is built from
 * the server's own, as Codex clients ask on every start. Steps, in order:
 * inherit all / core / none; drop the default excludes (`*KEY*`, `*SECRET*`,
 * `*TOKEN*`) unless `ignoreDefaultExcludes`; drop `exclude`; add `set`; keep
 * only `includeOnly` when it is non-empty; finally overlay the request's `env`.
 */
import os from 'node:os';

export interface EnvPolicy {
  inherit: 'all' | 'core' | 'none';
  ignoreDefaultExcludes: boolean;
  exclude: string[];
  set: Record<string, string>;
  includeOnly: string[];
}

/** The "core" subset, as observed on the reference (both generations), names in any ASCII case. */
const CORE_VARIABLES: ReadonlySet<string> = new Set([
  'HOME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'LOGNAME',
  'PATH',
  'SHELL',
  'TEMP',
  'TMP',
  'TMPDIR',
  'USER',
]);
const DEFAULT_EXCLUDES = ['*KEY*', '*SECRET*', '*TOKEN*'];

/** ASCII letters only, as the reference folds case (`ſ` is not `S` there). */
const isCore = (name: string) => CORE_VARIABLES.has(name.replace(/[a-z]+/g, (letters) => letters.toUpperCase()));

/** A glob with `*` and `?` as its wildcards (`[` is literal, as the reference takes it), matched case-insensitively against a whole name. */
export function globMatcher(pattern: string): (name: string) => boolean {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const source = pattern
    .split('*')
    .map((part) => part.split('?').map(literal).join('.'))
    .join('.*');
  const regex = new RegExp(`^${source}$`, 'is');
  return (name) => regex.test(name);
}

function anyOf(patterns: string[]): (name: string) => boolean {
  const matchers = patterns.map(globMatcher);
  return (name) => matchers.some((matches) => matches(name));
}

/** The child's environment under `policy`, from `serverEnv` with `requestEnv` on top. */
export function buildEnvironment(
  policy: EnvPolicy,
  serverEnv: NodeJS.ProcessEnv,
  requestEnv: Record<string, string>,
): Record<string, string> {
  const inherited = Object.entries(serverEnv).filter((entry): entry is [string, string] => entry[1] !== undefined);
  let entries = policy.inherit === 'all' ? inherited : policy.inherit === 'core' ? inherited.filter(([name]) => isCore(name)) : [];
  if (!policy.ignoreDefaultExcludes) {
    const excluded = anyOf(DEFAULT_EXCLUDES);
    entries = entries.filter(([name]) => !excluded(name));
  }
  const excluded = anyOf(policy.exclude);
  // No prototype: a variable named `__proto__` is just a name here.
  const env: Record<string, string> = Object.assign(Object.create(null), Object.fromEntries(entries.filter(([name]) => !excluded(name))));
  Object.assign(env, policy.set);
  if (policy.includeOnly.length > 0) {
    const included = anyOf(policy.includeOnly);
    for (const name of Object.keys(env)) if (!included(name)) delete env[name];
  }
  Object.assign(env, requestEnv);
  return sortedByName(env);
}

/** The reference hands a child its variables sorted by name, with a policy or without; so do we (`env` prints the same). */
export function sortedByName(env: Record<string, string>): Record<string, string> {
  const sorted: Record<string, string> = Object.create(null);
  for (const name of Object.keys(env).sort()) sorted[name] = env[name]!;
  return sorted;
}

/** The user's login shell, which a PTY child gets as `SHELL` when its environment has none. */
export function loginShell(): string {
  try {
    return os.userInfo().shell ?? '/bin/sh';
  } catch {
    return '/bin/sh';
  }
}
