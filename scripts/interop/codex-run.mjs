/**
 * Runs one `codex exec` against one exec-server, through the tap, with the
 * model replaced by the scripted mock. Everything Codex needs is written to a
 * fresh run directory: CODEX_HOME (config.toml + environments.toml, as in
 * PROTOCOL-V2.md §3), the workdir the command runs in, and the tap log.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMockResponses } from './mock-responses.mjs';

const TAP = path.join(path.dirname(fileURLToPath(import.meta.url)), 'tap.mjs');
const ENVIRONMENT_ID = 'tap';

/** TOML basic strings share JSON's escapes, so JSON.stringify quotes a value safely. */
const tomlString = (value) => JSON.stringify(String(value));
const tomlTable = (entries) =>
  `{ ${Object.entries(entries)
    .map(([k, v]) => `${k} = ${tomlString(v)}`)
    .join(', ')} }`;

function writeConfig(home, baseUrl, serverArgv, serverEnv, tapLog, webSocket) {
  // No retries: a mock that answered wrongly should fail the run at once, not after back-off.
  fs.writeFileSync(
    path.join(home, 'config.toml'),
    [
      'model = "mock-model"',
      'model_provider = "mock"',
      '[model_providers.mock]',
      'name = "mock"',
      `base_url = ${tomlString(baseUrl)}`,
      'wire_api = "responses"',
      'requires_openai_auth = false',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      // Features that never touch the exec-server, off: each run would start them (a `git ls-remote`
      // of the plugin catalogue, app discovery), which only takes CPU from the cases beside it.
      '[features]',
      'plugins = false',
      'remote_plugin = false',
      'apps = false',
      '',
    ].join('\n'),
  );
  // include_local = false: if Codex could fall back to running commands itself, a broken server would go unnoticed.
  fs.writeFileSync(
    path.join(home, 'environments.toml'),
    [
      `default = ${tomlString(ENVIRONMENT_ID)}`,
      'include_local = false',
      '[[environments]]',
      `id = ${tomlString(ENVIRONMENT_ID)}`,
      // Over WebSocket Codex connects to a listener (no tap: its log stays empty).
      ...(webSocket
        ? [`url = ${tomlString(webSocket.url)}`, `auth_bearer_token = ${tomlString(webSocket.token)}`]
        : [
            `program = ${tomlString(process.execPath)}`,
            `args = [${tomlString(TAP)}]`,
            // The server's PATH is the caller's: not Codex's, which has the stand-in directory (see
            // runCodex) and the directories Codex puts first itself. Codex sends no PATH of its own
            // for the commands (envPolicy inherit "all" in the tap logs): they get the server's.
            `env = ${tomlTable({ PATH: process.env.PATH ?? '', ...serverEnv, TAP_TARGET_ARGV: JSON.stringify(serverArgv), TAP_LOG: tapLog })}`,
          ]),
      '',
    ].join('\n'),
  );
}

/** Kills the whole process group (Codex, the tap and the server under it), ignoring the already-gone case. */
function killGroup(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    /* already exited */
  }
}

/**
 * Options: codexBin, serverArgv (the server command the tap starts), serverEnv
 * (extra variables for the server), script (mock steps), prompt, runDir (fresh,
 * will be created), setup(workdir) (optional, prepares files), timeoutMs,
 * sandbox (a Codex `--sandbox` mode such as "workspace-write"; default: no sandbox),
 * webSocket ({ url, token }: Codex connects to that listener instead of starting serverArgv).
 * Resolves to { exitCode, signal, timedOut, stdout, stderr, requests, tapLog, workdir, durationMs }.
 */
export async function runCodex({
  codexBin,
  serverArgv,
  serverEnv = {},
  script,
  prompt,
  runDir,
  setup,
  timeoutMs = 45_000,
  sandbox,
  webSocket,
}) {
  const home = path.join(runDir, 'home');
  const workdir = path.join(runDir, 'work');
  const tapLog = path.join(runDir, 'tap.log');
  fs.mkdirSync(home, { recursive: true });
  fs.mkdirSync(workdir, { recursive: true });
  fs.writeFileSync(tapLog, '');
  if (setup) await setup(workdir);

  const mock = await startMockResponses(script);
  writeConfig(home, mock.baseUrl, serverArgv, serverEnv, tapLog, webSocket);

  // The commands run in login shells (`bash -lc`): a HOME of their own keeps the machine user's
  // dotfiles out of the run (a pyenv init there cost every command 0.7 s, and a minute once its lock
  // was left behind).
  const userHome = path.join(runDir, 'user-home');
  fs.mkdirSync(userHome, { recursive: true });
  // Codex looks up the OS at start (the os_info crate) by running `lsb_release -a` three times, a
  // shell script that forks eight more programs each time: CPU taken from the cases beside it. A
  // stand-in that fails at once sends os_info to /etc/os-release instead.
  const standIns = path.join(runDir, 'codex-path');
  fs.mkdirSync(standIns);
  fs.writeFileSync(path.join(standIns, 'lsb_release'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
  const env = { ...process.env, CODEX_HOME: home, HOME: userHome, PATH: `${standIns}:${process.env.PATH ?? ''}` };
  // A real key in the caller's environment must not matter (and must not be sent anywhere).
  delete env.OPENAI_API_KEY;
  delete env.CODEX_API_KEY;
  const started = Date.now();
  const child = spawn(
    codexBin,
    ['exec', '--skip-git-repo-check', ...(sandbox ? ['--sandbox', sandbox] : ['--dangerously-bypass-approvals-and-sandbox']), prompt],
    // detached: its own process group, so a timeout can take down Codex and everything it started.
    { cwd: workdir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (bytes) => (stdout += bytes));
  child.stderr.on('data', (bytes) => (stderr += bytes));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child);
  }, timeoutMs);
  const [exitCode, signal] = await new Promise((resolve) => {
    child.on('error', (error) => {
      stderr += `spawn failed: ${error.message}\n`;
      resolve([null, null]);
    });
    child.on('close', (code, sig) => resolve([code, sig]));
  });
  clearTimeout(timer);
  // The stdio server normally dies with Codex; make sure nothing of this run lingers.
  killGroup(child);
  await mock.close();
  // Kept with the run directory, so a failure can be read the way the model saw it.
  fs.writeFileSync(path.join(runDir, 'model-requests.json'), JSON.stringify(mock.requests, null, 1));
  return {
    exitCode,
    signal,
    timedOut,
    stdout,
    stderr,
    requests: mock.requests,
    finalText: mock.finalText,
    tapLog: fs.readFileSync(tapLog, 'utf8'),
    workdir,
    durationMs: Date.now() - started,
  };
}
