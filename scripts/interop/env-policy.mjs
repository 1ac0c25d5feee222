/**
 * Which of the server's own environment variables a command should see,
 * given the `envPolicy` Codex sent on process/start (PROTOCOL.md §3.2, the
 * rules measured on the reference for both Codex versions). The environment
 * scenario uses this to judge the server by the policy Codex actually sent,
 * rather than by a guess that would break when Codex changes its policy.
 */

// The "core" subset the reference keeps for inherit:"core".
const CORE = new Set(['HOME', 'LANG', 'LC_ALL', 'LOGNAME', 'PATH', 'SHELL', 'TEMP', 'TMP', 'TMPDIR', 'USER']);
const DEFAULT_EXCLUDES = ['*KEY*', '*SECRET*', '*TOKEN*'];

/** Case-insensitive glob match where only `*` is special. */
function globMatches(glob, name) {
  const pattern = glob
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`, 'i').test(name);
}

/**
 * True if a variable `name` from the server's environment should reach the
 * command. Without a policy the command gets exactly the request's `env`; a
 * name in `env` or `set` is present regardless (with that value, which the
 * caller checks separately).
 */
export function expectedVisibility(name, policy, env = {}) {
  if (name in env) return true;
  if (!policy) return false;
  let visible = policy.inherit === 'all' || (policy.inherit === 'core' && CORE.has(name));
  if (visible && !policy.ignoreDefaultExcludes && DEFAULT_EXCLUDES.some((glob) => globMatches(glob, name))) visible = false;
  if (visible && (policy.exclude ?? []).some((glob) => globMatches(glob, name))) visible = false;
  if (policy.set && name in policy.set) visible = true;
  if (visible && (policy.includeOnly ?? []).length > 0 && !policy.includeOnly.some((glob) => globMatches(glob, name))) visible = false;
  return visible;
}
