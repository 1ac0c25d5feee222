/**
 * The `sandbox` workload: `/bin/true` from process/start to process/closed,
 * plain and under Codex's workspace-write policy (bwrap), alternating in one
 * server, so the difference is what confinement costs. ms.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Driver } from './driver.mjs';

const special = (kind, access) => ({ path: { type: 'special', value: { kind } }, access });

function workspaceWrite(workspace) {
  const entries = [special('root', 'read'), special('project_roots', 'write'), special('slash_tmp', 'write'), special('tmpdir', 'write')];
  return {
    permissions: { type: 'managed', file_system: { type: 'restricted', entries }, network: 'restricted' },
    cwd: pathToFileURL(workspace).href,
    workspaceRoots: [pathToFileURL(workspace).href],
    // Codex 0.169 sends these, and its server (like ours) refuses a policy without windowsSandboxLevel.
    windowsSandboxLevel: 'disabled',
    windowsSandboxProxySettingsMode: 'reconcile',
    useLegacyLandlock: false,
  };
}

const percentile = (samples, p) => [...samples].sort((a, b) => a - b)[Math.min(samples.length - 1, Math.floor((p / 100) * samples.length))];

export async function sandboxOverhead(command, { rounds = 150, warmup = 10 } = {}) {
  const workspace = fs.mkdtempSync(path.join(os.homedir(), '.exec-server-bench-sandbox-'));
  const driver = await Driver.start(command);
  const samples = { plain: [], sandboxed: [] };
  let next = 0;
  const once = async (sandbox) => {
    const processId = `sb${next++}`;
    const started = process.hrtime.bigint();
    const closed = driver.waitClosed(processId);
    await driver.request('process/start', {
      processId,
      argv: ['/bin/true'],
      cwd: pathToFileURL(workspace).href,
      env: { PATH: '/usr/bin:/bin' },
      tty: false,
      sandbox,
    });
    await closed;
    return Number(process.hrtime.bigint() - started) / 1e6;
  };
  try {
    for (let i = 0; i < warmup; i++) await once(i % 2 ? workspaceWrite(workspace) : null);
    for (let i = 0; i < rounds; i++) {
      samples.plain.push(await once(null));
      samples.sandboxed.push(await once(workspaceWrite(workspace)));
    }
  } finally {
    await driver.close();
    fs.rmSync(workspace, { recursive: true, force: true });
  }
  const p50 = { plain: percentile(samples.plain, 50), sandboxed: percentile(samples.sandboxed, 50) };
  return {
    plainP50: p50.plain,
    plainP99: percentile(samples.plain, 99),
    sandboxedP50: p50.sandboxed,
    sandboxedP99: percentile(samples.sandboxed, 99),
    addedP50: p50.sandboxed - p50.plain,
  };
}
