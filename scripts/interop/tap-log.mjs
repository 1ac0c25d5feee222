/**
 * Reading the tap log (see tap.mjs): finding the requests Codex sent and the
 * server's answers, and choosing the few lines worth printing when a scenario
 * fails, so the report shows the exchange that went wrong instead of 200 lines
 * of start-up probes.
 */

/** Parses the log into entries `{ dir: 'C->S'|'S->C'|'S!!'|'---', text, msg }` (`msg` = parsed JSON or null). */
export function parseTapLog(text) {
  const entries = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const space = line.indexOf(' ');
    const dir = line.slice(0, space);
    const body = line.slice(space + 1);
    let msg = null;
    if (dir === 'C->S' || dir === 'S->C') {
      try {
        msg = JSON.parse(body);
      } catch {
        /* an <EOF> marker or a line cut short by the tap */
      }
    }
    entries.push({ dir, text: body, msg });
  }
  return entries;
}

/** The params of every request (client to server) with this method, in order. */
export function requestsFor(entries, method) {
  return entries.filter((e) => e.dir === 'C->S' && e.msg?.method === method && e.msg.id !== undefined).map((e) => e.msg.params);
}

const shorten = (text, max) => (text.length > max ? `${text.slice(0, max)}…` : text);

// Codex's start-up probes (git root, AGENTS.md, skills) are answered "not found" by design; they are noise.
const PROBE_PATH = /(\/\.git|\/AGENTS(\.override)?\.md|\/\.agents\/skills)$/;

/**
 * The lines to show for a failed scenario: first the requests that got an
 * error answer, with the answers; then the tail of the rest of the exchange
 * (a success answer Codex could not use, e.g. one missing a field, is only
 * visible there). Start-up probes are left out, and lines that repeat (same
 * text apart from the id) are shown once. `limit` bounds each of the two parts.
 */
export function relevantLines(entries, limit = 8, width = 400) {
  const probeIds = new Set();
  for (const e of entries)
    if (e.dir === 'C->S' && e.msg?.id !== undefined && PROBE_PATH.test(String(e.msg.params?.path ?? ''))) probeIds.add(e.msg.id);
  // A probe request, or the server's answer to one (an answer has the id but no method).
  const isProbe = (e) => e.msg?.id !== undefined && probeIds.has(e.msg.id) && (e.dir === 'C->S' || !e.msg.method);
  const kept = entries.filter((e) => e.dir !== '---' && !isProbe(e));

  const requestById = new Map();
  for (const e of kept) if (e.dir === 'C->S' && e.msg?.method && e.msg.id !== undefined) requestById.set(e.msg.id, e);
  const errors = [];
  for (const e of kept) {
    if (e.dir !== 'S->C' || !e.msg?.error) continue;
    const request = requestById.get(e.msg.id);
    if (request) errors.push(request);
    errors.push(e);
  }
  const withoutId = (e) => `${e.dir} ${e.text.replace(/"id":-?\d+/, '"id":_')}`;
  const once = (list) => {
    const seen = new Set();
    return list.filter((e) => !seen.has(withoutId(e)) && seen.add(withoutId(e)));
  };
  const errorPart = once(errors).slice(0, limit);
  const shown = new Set(errorPart);
  // Keep the last of repeated lines, so the tail ends where the exchange ended.
  const tailPart = once([...kept].reverse())
    .reverse()
    .filter((e) => !shown.has(e))
    .slice(-limit);
  const lines = errorPart.map((e) => `${e.dir} ${shorten(e.text, width)}`);
  if (errorPart.length && tailPart.length) lines.push('… last lines:');
  return [...lines, ...tailPart.map((e) => `${e.dir} ${shorten(e.text, width)}`)];
}
