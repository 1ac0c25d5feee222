/**
 * The home and temporary directories `initialize` reports when the server's
 * HOME or TMPDIR is odd, beside Codex 0.169.0 when installed: Codex clients
 * put files there, so a guess is worse than no answer.
 */
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { contestants } from './support/differential.js';

/** Each contestant's `userHomeDir` and `tempDir` (absent stays absent) under `env`. */
async function directoriesUnder(env: Record<string, string>): Promise<Record<string, unknown>> {
  const list = await contestants({ ...process.env, ...env });
  const answers: Record<string, unknown> = {};
  try {
    for (const { name, server } of list) {
      const { userHomeDir, tempDir } = await server.request('environment/info', null);
      answers[name] = { userHomeDir, tempDir };
    }
  } finally {
    await Promise.all(list.map((contestant) => contestant.dispose()));
  }
  if (answers.reference) expect(answers.ours).toEqual(answers.reference);
  return answers.ours as Record<string, unknown>;
}

const uri = (file: string) => pathToFileURL(file).href;
const passwdHome = uri(os.userInfo().homedir);

describe('environment directories, side by side with the reference', () => {
  it('reports no home for a relative HOME, the passwd home for an empty one, and an absolute one normalized', async () => {
    expect(await directoriesUnder({ HOME: 'rel/home', TMPDIR: '/tmp' })).toEqual({ userHomeDir: undefined, tempDir: 'file:///tmp' });
    expect(await directoriesUnder({ HOME: '', TMPDIR: '/tmp' })).toEqual({ userHomeDir: passwdHome, tempDir: 'file:///tmp' });
    expect(await directoriesUnder({ HOME: '/nowhere/./a/../b/', TMPDIR: '/tmp//t/' })).toEqual({
      userHomeDir: 'file:///nowhere/b',
      tempDir: 'file:///tmp/t',
    });
  });

  it('reports a relative TMPDIR under the server cwd, as the reference does', async () => {
    expect(await directoriesUnder({ TMPDIR: 'rel/tmp' })).toMatchObject({ tempDir: uri(`${process.cwd()}/rel/tmp`) });
  });
});
