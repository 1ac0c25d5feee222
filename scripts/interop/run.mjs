#!/usr/bin/env node
/**
 * `npm run interop [-- --server ours|codex] [--only a,b] [--version 0.169.0] [--jobs N] [--timeout S] [--websocket]`
 *
 * Drives the real Codex CLI (0.134.0 and 0.169.0) against an exec-server,
 * with a scripted mock in place of the model, for every scenario in
 * scenarios.mjs, and prints scenario × mode × Codex version → PASS/FAIL.
 * `--server codex` runs each version against its own `codex exec-server` as a
 * baseline: those runs must pass, or the harness (not the server) is wrong.
 * `--websocket` runs our server as a WebSocket listener with a Bearer token, and Codex
 * 0.169.0 connects to it (`url` + `auth_bearer_token` in environments.toml): the scenarios
 * that judge from the model's view only, since there is no tap to log the exchange.
 * Exits 1 if any case fails.
 */
import { parseArgs } from 'node:util';
import fs from 'node:fs';
import { VERSIONS, ensureCodex } from './install.mjs';
import { OUR_SERVER, pruneOldRuns, runCases, startListener } from './matrix.mjs';
import { formatFailures, formatTable } from './report.mjs';
import { scenarioCases } from './scenarios.mjs';

const { values } = parseArgs({
  options: {
    server: { type: 'string', default: 'ours' },
    only: { type: 'string' },
    version: { type: 'string' },
    // 3 at a time: each run is mostly Codex waiting on the mock and the server; 2 cores keep up.
    jobs: { type: 'string', default: '3' },
    timeout: { type: 'string', default: '45' },
    websocket: { type: 'boolean', default: false },
  },
});

function fail(message) {
  console.error(`interop: ${message}`);
  process.exit(2);
}

const server = values.server;
if (!['ours', 'codex'].includes(server)) fail(`--server must be ours or codex, not ${server}`);
const versions = values.version ? values.version.split(',') : values.websocket ? ['0.169.0'] : VERSIONS;
if (values.websocket && server !== 'ours') fail('--websocket runs our server only');
/** The scenarios judged without the tap log (a WebSocket connection has no tap). */
const WEBSOCKET_SCENARIOS = ['exit-code', 'dev-stdio', 'pty-cat', 'late-output', 'big-output', 'sandbox', 'resume'];
for (const version of versions) if (!VERSIONS.includes(version)) fail(`unknown --version ${version} (known: ${VERSIONS.join(', ')})`);
if (server === 'ours' && !fs.existsSync(OUR_SERVER)) fail(`${OUR_SERVER} is missing: run npm run build first`);

let cases;
try {
  for (const version of versions) ensureCodex(version);
  const only = values.only?.split(',').filter(Boolean) ?? (values.websocket ? WEBSOCKET_SCENARIOS : undefined);
  const picked = scenarioCases(only, { webSocket: values.websocket });
  cases = versions.flatMap((version) => picked.map((c) => ({ ...c, version })));
} catch (error) {
  fail(error.message);
}

pruneOldRuns();
const webSocket = values.websocket ? await startListener() : undefined;
if (webSocket) console.log(`interop: our server listens on ${webSocket.url} (Bearer token)`);
const started = Date.now();
console.log(
  `interop: ${cases.length} case(s) against ${server === 'ours' ? OUR_SERVER : "each Codex version's own exec-server"}, ${values.jobs} at a time`,
);
const results = await runCases(cases, {
  jobs: Number(values.jobs),
  server,
  timeoutMs: Number(values.timeout) * 1000,
  webSocket,
  onDone: (c, r) =>
    console.log(`  ${r.ok ? 'PASS' : 'FAIL'} ${c.scenario.name} [${c.mode}] Codex ${c.version} (${(r.durationMs / 1000).toFixed(1)} s)`),
});

const entries = cases.map((c, i) => ({ ...c, result: results[i] }));
console.log('');
console.log(formatTable(entries, versions, server));
const failures = formatFailures(entries);
if (failures) console.log(`\n${failures}`);
await webSocket?.stop();
const failed = results.filter((r) => !r.ok).length;
console.log(`\n${results.length - failed} passed, ${failed} failed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(failed ? 1 : 0);
