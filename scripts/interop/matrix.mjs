/**
 * Runs scenario cases: one case = (scenario, mode, Codex version, server).
 * Shared by run.mjs (the `npm run interop` report) and test/interop.test.ts,
 * so both judge the server the same way.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCodex } from './codex-run.mjs';
import { cacheRoot, codexBinary } from './install.mjs';
import { functionOutputs, outputText } from './mock-responses.mjs';
import { excerpt, parseExecOutput } from './exec-output.mjs';
import { parseTapLog, relevantLines } from './tap-log.mjs';
import { SERVER_ENV } from './scenarios.mjs';
import { tcpProxy } from './tcp-proxy.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const OUR_SERVER = path.join(ROOT, 'dist', 'cli', 'main.js');

/**
 * The command the tap starts: our build, the Codex release's own exec-server
 * as the baseline, or any argv array (to try the harness on another server).
 */
export function serverArgv(server, version) {
  if (Array.isArray(server)) return server;
  if (server === 'ours') return [process.execPath, OUR_SERVER];
  if (server === 'codex') return [codexBinary(version), 'exec-server', '--listen', 'stdio'];
  throw new Error(`unknown server ${server} (ours | codex)`);
}

let runCounter = 0;

/** A fresh directory for one run, under the cache (CODEX_HOME must not be under /tmp, see PROTOCOL-V2.md). */
function freshRunDir(label) {
  runCounter += 1;
  const dir = path.join(cacheRoot(), 'runs', `${process.pid}-${runCounter}-${label}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Removes run directories left by earlier invocations more than a day ago (failures are kept for inspection). */
export function pruneOldRuns(maxAgeMs = 24 * 3600_000) {
  const runs = path.join(cacheRoot(), 'runs');
  if (!fs.existsSync(runs)) return;
  for (const name of fs.readdirSync(runs)) {
    const dir = path.join(runs, name);
    try {
      if (Date.now() - fs.statSync(dir).mtimeMs > maxAgeMs) fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      /* another run removed it */
    }
  }
}

/**
 * Runs one case and judges it. Resolves to { ok, reasons, tapLines, runDir, durationMs }.
 * The run directory is removed when the case passes and kept when it fails.
 */
export async function runCase({ scenario, mode, version, server = 'ours', timeoutMs = 45_000, webSocket }) {
  const runDir = freshRunDir(`${Array.isArray(server) ? 'custom' : server}-${version}-${scenario.name}-${mode}`);
  const workdir = path.join(runDir, 'work');
  // A scenario that cuts the connection gets a proxy of its own, so that other cases keep theirs.
  const proxy = webSocket && scenario.webSocketOnly ? await tcpProxy(webSocket.url) : undefined;
  const steps = scenario.script({ mode, workdir, cutConnection: () => proxy?.cut() });
  const reasons = [];
  let run;
  try {
    run = await runCodex({
      codexBin: codexBinary(version),
      serverArgv: serverArgv(server, version),
      serverEnv: SERVER_ENV,
      script: steps,
      prompt: scenario.prompt,
      runDir,
      setup: scenario.setup,
      timeoutMs,
      sandbox: scenario.sandbox,
      webSocket: proxy ? { ...webSocket, url: proxy.url } : webSocket,
    });
  } catch (error) {
    return { ok: false, reasons: [`harness error: ${error.stack ?? error}`], tapLines: [], runDir, durationMs: 0 };
  } finally {
    await proxy?.close();
  }
  const tap = parseTapLog(run.tapLog);
  if (run.timedOut) reasons.push(`codex exec did not finish within ${timeoutMs / 1000} s (killed)`);
  else if (run.exitCode !== 0) reasons.push(`codex exec exited ${run.exitCode ?? run.signal}: ${excerpt(run.stderr.slice(-600), 700)}`);
  // Each model request but the last answers one scripted call; fewer means Codex stopped early.
  if (run.requests.length < steps.length + 1) {
    reasons.push(
      `the model got ${run.requests.length} request(s), expected ${steps.length + 1} (one per scripted call, plus the final one)`,
    );
  }
  const outputs = functionOutputs(run.requests.at(-1));
  const calls = steps.map((_, i) => parseExecOutput(outputText(outputs.get(`call_${i + 1}`))));
  if (reasons.length === 0) {
    try {
      const reconnections = proxy ? proxy.connections - 1 : 0;
      reasons.push(...scenario.check({ mode, workdir, calls, requests: run.requests, tap, run, reconnections }));
    } catch (error) {
      reasons.push(`check threw: ${error.stack ?? error}`);
    }
  } else {
    // Still show what the model saw for each call; it usually names the server's error.
    for (const [i, call] of calls.entries()) if (call.raw) reasons.push(`call_${i + 1} output: ${excerpt(call.raw)}`);
  }
  const ok = reasons.length === 0;
  // INTEROP_KEEP=1 keeps passing runs too, to look at what a passing exchange looks like.
  if (ok && !process.env.INTEROP_KEEP) fs.rmSync(runDir, { recursive: true, force: true });
  return { ok, reasons, tapLines: ok ? [] : relevantLines(tap), runDir, durationMs: run.durationMs };
}

/** Runs `cases` with at most `jobs` Codex processes at a time; `onDone(case, result)` as each finishes. */
export async function runCases(cases, { jobs = 3, server = 'ours', timeoutMs, webSocket, onDone = () => {} } = {}) {
  const results = new Array(cases.length);
  let next = 0;
  const lane = async () => {
    while (next < cases.length) {
      const index = next++;
      results[index] = await runCase({ ...cases[index], server, timeoutMs, webSocket });
      onDone(cases[index], results[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, jobs) }, lane));
  return results;
}

/** Our server as a WebSocket listener on loopback with a fresh token; its URL, token, and how to stop it (and remove the token). */
export async function startListener() {
  const token = randomBytes(16).toString('hex');
  const tokenDir = fs.mkdtempSync(path.join(os.tmpdir(), 'interop-ws-'));
  const tokenFile = path.join(tokenDir, 'token');
  fs.writeFileSync(tokenFile, token, { mode: 0o600 });
  const args = [OUR_SERVER, '--listen', 'ws://127.0.0.1:0', '--ws-auth', 'capability-token', '--ws-token-file', tokenFile];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (bytes) => {
      stderr += bytes;
      const match = /listening on (ws:\/\/\S+)/.exec(stderr);
      if (match) resolve(match[1]);
    });
    child.on('exit', () => reject(new Error(`the listener exited: ${stderr}`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
    fs.rmSync(tokenDir, { recursive: true, force: true });
  };
  return { url, token, stop };
}
