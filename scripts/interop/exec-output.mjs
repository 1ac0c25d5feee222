/**
 * Reading what Codex told the model about a command. Codex (0.134 and 0.169)
 * formats the output of exec_command and write_stdin as a small text report:
 *
 *   Chunk ID: 2e7880
 *   Wall time: 0.2252 seconds
 *   Process exited with code 3          (or: Process running with session ID 41)
 *   Original token count: 2
 *   Output:
 *   out
 *   err
 *
 * Scenarios judge the server by these fields, since that is all the model sees.
 */

/** Parses one tool output text into `{ exitCode, sessionId, tokenCount, output, raw }` (missing fields are null). */
export function parseExecOutput(text) {
  const raw = String(text ?? '');
  const exited = /^Process exited with code (-?\d+)$/m.exec(raw);
  const running = /^Process running with session ID (\d+)$/m.exec(raw);
  const tokens = /^Original token count: (\d+)$/m.exec(raw);
  const marker = raw.indexOf('\nOutput:\n');
  return {
    exitCode: exited ? Number(exited[1]) : null,
    sessionId: running ? Number(running[1]) : null,
    tokenCount: tokens ? Number(tokens[1]) : null,
    output: marker === -1 ? '' : raw.slice(marker + '\nOutput:\n'.length),
    raw,
  };
}

/** A one-line excerpt of a tool output for failure messages. */
export function excerpt(text, max = 300) {
  const flat = JSON.stringify(String(text ?? ''));
  return flat.length > max ? `${flat.slice(0, max)}…(${flat.length} chars)` : flat;
}
