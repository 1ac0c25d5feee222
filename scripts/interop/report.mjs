/**
 * Printing interop results: a PASS/FAIL table (scenario and mode down, Codex
 * version across), then, for each failure, the reasons and the tap lines that
 * show the failing request and answer.
 */

const pad = (text, width) => String(text).padEnd(width);

/** `entries` = [{ scenario, mode, version, result }]. Returns the table as text. */
export function formatTable(entries, versions, server) {
  const rows = [];
  for (const { scenario, mode } of entries) {
    const key = `${scenario.name}\t${mode}`;
    if (!rows.includes(key)) rows.push(key);
  }
  const nameWidth = Math.max(8, ...entries.map((e) => e.scenario.name.length)) + 2;
  const colWidth = Math.max(12, ...versions.map((v) => v.length)) + 2;
  const lines = [`server: ${server}`, `${pad('scenario', nameWidth)}${pad('mode', 6)}${versions.map((v) => pad(v, colWidth)).join('')}`];
  for (const key of rows) {
    const [name, mode] = key.split('\t');
    const cells = versions.map((version) => {
      const entry = entries.find((e) => e.scenario.name === name && e.mode === mode && e.version === version);
      if (!entry) return pad('-', colWidth);
      return pad(`${entry.result.ok ? 'PASS' : 'FAIL'} ${(entry.result.durationMs / 1000).toFixed(1)}s`, colWidth);
    });
    lines.push(`${pad(name, nameWidth)}${pad(mode, 6)}${cells.join('')}`);
  }
  return lines.join('\n');
}

/** The details of each failure: reasons, then the relevant tap lines and where the whole log is. */
export function formatFailures(entries) {
  const blocks = [];
  for (const { scenario, mode, version, result } of entries) {
    if (result.ok) continue;
    const lines = [`FAIL ${scenario.name} [${mode}] with Codex ${version}`];
    for (const reason of result.reasons) lines.push(`  - ${reason}`);
    if (result.tapLines.length) {
      lines.push('  tap (last relevant lines):');
      for (const line of result.tapLines) lines.push(`    ${line}`);
    }
    lines.push(`  run directory (tap.log, home/, work/): ${result.runDir}`);
    blocks.push(lines.join('\n'));
  }
  return blocks.join('\n\n');
}
