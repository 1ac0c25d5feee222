/**
 * Interop with the real Codex CLI: the scenarios of `npm run interop`
 * (scripts/interop/scenarios.mjs) run against our built server, once per Codex
 * version, with a scripted mock in place of the model. Skipped when a Codex
 * binary is not in the interop cache (`node scripts/interop/install.mjs`
 * fetches them) or at $EXEC_SERVER_CODEX_0134 / $EXEC_SERVER_CODEX_0169, and
 * when dist/ has not been built.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findBwrap } from '../src/server/sandbox/bwrap.js';
// The helpers are plain .mjs shared with `npm run interop` and have no type declarations; importing
// them through a computed specifier types them as `any` instead of failing a type check.
const interop = (name: string) => import(`../scripts/interop/${name}.mjs`);
const { VERSIONS, codexBinary, isInstalled } = await interop('install');
const { OUR_SERVER, runCase } = await interop('matrix');
const { formatFailures } = await interop('report');
const { scenarioCases } = await interop('scenarios');

// Each case starts a real Codex and server; 3 at a time keeps a 2-core machine busy without starving
// the other test worker, and holds the file near 20-30 s.
const JOBS = 3;
const CASE_TIMEOUT_MS = 45_000;

/** A tiny semaphore: concurrent tests queue here, so at most JOBS Codex runs overlap. */
let running = 0;
const waiting: (() => void)[] = [];
async function limited<T>(task: () => Promise<T>): Promise<T> {
  if (running >= JOBS) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
  try {
    return await task();
  } finally {
    running -= 1;
    waiting.shift()?.();
  }
}

function skipReason(version: string): string | null {
  if (!fs.existsSync(OUR_SERVER)) return `${OUR_SERVER} not built (npm run build)`;
  if (!isInstalled(version)) return `no Codex ${version} at ${codexBinary(version)} (node scripts/interop/install.mjs)`;
  return null;
}

const cases: { scenario: { name: string; sandbox?: string }; mode: string }[] = scenarioCases();
/** Codex 0.169 sends its sandbox policy, which our server enforces with bwrap (0.134 brings its own sandbox). */
const withoutBwrap = (version: string, scenario: { sandbox?: string }) =>
  version !== '0.134.0' && scenario.sandbox !== undefined && findBwrap(undefined) === undefined;

/**
 * Generation 1's share: one scenario for each family of methods Codex 0.134 uses: a process and its
 * exit (environment), PTY input (pty-cat), fs read and write (apply-patch reads the file it edits).
 */
const GENERATION_1_SHARE = new Set(['environment', 'pty-cat', 'apply-patch']);

/**
 * The suite's share of the matrix (`npm run interop` runs all of it), for a suite under 3 minutes on
 * two cores: with the current Codex every scenario on pipes, and on a PTY the interactive one (our
 * own PTY tests cover exit codes and large outputs on a PTY); with 0.134 the generation-1 share.
 */
const inSuite = (version: string, scenario: { name: string }, mode: string) =>
  (mode !== 'pty' || scenario.name === 'pty-cat') && (version !== '0.134.0' || GENERATION_1_SHARE.has(scenario.name));

for (const version of VERSIONS as string[]) {
  const reason = skipReason(version);
  describe
    .skipIf(reason !== null)
    .concurrent(`interop: Codex ${version} against our server${reason ? ` (skipped: ${reason})` : ''}`, () => {
      for (const { scenario, mode } of cases.filter((c) => inSuite(version, c.scenario, c.mode))) {
        const skipped = withoutBwrap(version, scenario);
        const title = `${scenario.name} [${mode}]${skipped ? ' (skipped: no bwrap on PATH, install bubblewrap)' : ''}`;
        it.skipIf(skipped)(title, { timeout: CASE_TIMEOUT_MS * JOBS + 30_000 }, async () => {
          const result = await limited(() => runCase({ scenario, mode, version, server: 'ours', timeoutMs: CASE_TIMEOUT_MS }));
          expect(result.ok, formatFailures([{ scenario, mode, version, result }])).toBe(true);
        });
      }
    });
}

// Over WebSocket: Codex 0.169.0 connects to our listener (url + auth_bearer_token in environments.toml).
const { startListener } = await interop('matrix');
const webSocketReason = skipReason('0.169.0');
describe.skipIf(webSocketReason !== null)(
  `interop over WebSocket: Codex 0.169.0${webSocketReason ? ` (skipped: ${webSocketReason})` : ''}`,
  () => {
    const webSocketCases: typeof cases = scenarioCases(undefined, { webSocket: true });
    // resume runs a command, its output and its exit over the listener (what exit-code would add), and
    // cuts the connection mid-command: Codex resumes the session on a new one.
    for (const [name, mode] of [
      ['pty-cat', 'pty'],
      ['resume', 'pipe'],
    ] as const) {
      it(`${name} [${mode}]`, { timeout: CASE_TIMEOUT_MS * JOBS + 30_000 }, async () => {
        const listener = await startListener();
        try {
          const { scenario } = webSocketCases.find((c) => c.scenario.name === name && c.mode === mode)!;
          const result = await limited(() =>
            runCase({ scenario, mode, version: '0.169.0', server: 'ours', timeoutMs: CASE_TIMEOUT_MS, webSocket: listener }),
          );
          expect(result.ok, formatFailures([{ scenario, mode, version: '0.169.0', result }])).toBe(true);
        } finally {
          await listener.stop();
        }
      });
    }
  },
);
