/**
 * The floor of the `startup` workload: the least any exec-server written for
 * Node can cost at start, so that a ratio to bare Node can be read against
 * what Node itself makes possible.
 * - `FLOOR_SERVER`: a CommonJS script (run with `node -e`, so no ES module
 *   loader starts) that answers `initialize` and starts pipe children, with
 *   no validation, framing beyond newlines or cleanup.
 * - `FLOOR_FLOW`: a CommonJS parent that spawns that server, initializes it,
 *   runs `true`, waits for `process/closed`, ends the server's stdin and
 *   waits for it to exit: the startup workload's import + spawn + run +
 *   close with nothing to import.
 * Not servers anyone should use: they answer nothing else.
 */

export const FLOOR_SERVER = `
const { spawn } = require('node:child_process');
const send = (message) => process.stdout.write(JSON.stringify(message) + '\\n');
require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const { id, method, params } = JSON.parse(line);
  if (method === 'initialize') send({ id, result: { sessionId: 'floor' } });
  if (method !== 'process/start') return;
  const child = spawn(params.argv[0], params.argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.resume();
  child.stderr.resume();
  child.on('close', (exitCode) => send({ method: 'process/closed', params: { processId: params.processId, exitCode } }));
  send({ id, result: { processId: params.processId } });
});
`;

export const FLOOR_FLOW = `
const { spawn } = require('node:child_process');
const server = spawn(process.execPath, ['-e', ${JSON.stringify(FLOOR_SERVER)}], { stdio: ['pipe', 'pipe', 'inherit'] });
let seen = '';
let started = false;
server.stdout.setEncoding('utf8');
server.stdout.on('data', (text) => {
  seen += text;
  if (!started && seen.includes('"id":1')) {
    started = true;
    server.stdin.write(JSON.stringify({ id: 2, method: 'process/start', params: { processId: 'p', argv: ['true'] } }) + '\\n');
  }
  if (seen.includes('"process/closed"')) server.stdin.end();
});
server.on('exit', (code) => process.exit(code === 0 ? 0 : 1));
server.stdin.write(JSON.stringify({ id: 1, method: 'initialize', params: {} }) + '\\n');
`;
