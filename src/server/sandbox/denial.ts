/**
 * Whether a confined command failed because of the sandbox (`sandboxDenied`),
 * decided as Codex decides it (`is_likely_sandbox_denied`): a non-zero exit
 * whose output names a denial, unless the exit code is one a shell gives for
 * its own reasons (2, 126, 127); or death by SIGSYS (a seccomp kill).
 */
const DENIAL_WORDS = [
  'operation not permitted',
  'permission denied',
  'read-only file system',
  'seccomp',
  'sandbox',
  'landlock',
  'failed to write file',
];
const SHELL_EXIT_CODES = new Set([2, 126, 127]);
const SIGSYS_EXIT_CODE = 128 + 31;

export function likelySandboxDenied(exitCode: number, output: string): boolean {
  if (exitCode === 0) return false;
  const lower = output.toLowerCase();
  if (DENIAL_WORDS.some((word) => lower.includes(word))) return true;
  if (SHELL_EXIT_CODES.has(exitCode)) return false;
  return exitCode === SIGSYS_EXIT_CODE;
}
