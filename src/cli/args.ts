/** Command-line flags of `exec-server` (node:util parseArgs: no dependency needed). */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { ANSWER_BUDGET_BYTES, DEFAULT_DETACHED_TTL_MS, DEFAULT_MAX_LINE_BYTES, RETENTION_AFTER_CLOSE_MS } from '../protocol/defaults.js';
import { isLogLevel, type LogLevel } from '../server/logger.js';
import { isExecutableFile } from '../server/sandbox/bwrap.js';
import { isLoopback } from './loopback.js';

const MIN_MAX_LINE_BYTES = 64 * 1024 * 1024;

export interface CliOptions {
  help: boolean;
  version: boolean;
  logLevel: LogLevel;
  maxLineBytes: number;
  /** Bytes of answers a connection holds for a client that is not reading (see `server/answer-budget.ts`). */
  answerBudgetBytes: number;
  retentionMs: number | undefined;
  bwrap: string | undefined;
  /** Undefined for stdio. */
  webSocket: WebSocketCli | undefined;
}

export interface WebSocketCli {
  host: string;
  port: number;
  /** SHA-256 of the token (`--ws-token-file` hashed, or `--ws-token-sha256`); undefined without auth. */
  tokenSha256: Buffer | undefined;
  allowedOrigins: string[];
  /** How long a dropped connection's session waits to be resumed. */
  detachedTtlMs: number;
  /** What the listener should warn about as it starts (a token file other users can read). */
  warnings: string[];
}

export const USAGE = `Usage: exec-server [options]

Runs an exec-server on stdin/stdout: one JSON-RPC message per line.

Options:
  --listen stdio|ws://IP:PORT
                          stdio (default), or a WebSocket listener (port 0: a free port, printed
                          on stderr); one JSON-RPC message per WebSocket message, a session per connection
  --ws-auth capability-token
                          require Authorization: Bearer <token> on every connection
  --ws-token-file PATH    the token (trimmed), for --ws-auth
  --ws-token-sha256 HEX   or its SHA-256, for --ws-auth
  --ws-allow-origin URL   accept browser connections from this Origin (repeatable; none by default)
  --detached-session-ttl-ms N
                          how long a dropped connection's session (its processes, their output) waits
                          for a client to resume it with initialize.resumeSessionId (default: ${DEFAULT_DETACHED_TTL_MS};
                          0: end it at once)
  --log-level LEVEL       error | warn | info | debug (default: warn; env EXEC_SERVER_LOG)
  --max-line-bytes N      longest accepted input line (default: ${DEFAULT_MAX_LINE_BYTES}, minimum ${MIN_MAX_LINE_BYTES})
  --answer-budget-bytes N bytes of fs/readFile answers and buffered http/request bodies a connection
                          holds while its client is not reading (default: ${ANSWER_BUDGET_BYTES}, minimum 1)
  --retention-ms N        how long a closed process stays readable (default: ${RETENTION_AFTER_CLOSE_MS[1]} for
                          generation-1 clients, ${RETENTION_AFTER_CLOSE_MS[2]} for generation 2, as the references)
  --bwrap PATH            the bubblewrap that enforces sandbox policies (default: bwrap on PATH)
  -h, --help              show this help
  -v, --version           show the version
`;

export class UsageError extends Error {}

function cliOptions(env: NodeJS.ProcessEnv) {
  return {
    listen: { type: 'string', default: 'stdio' },
    'log-level': { type: 'string', default: env.EXEC_SERVER_LOG || 'warn' }, // set but empty: unset
    'max-line-bytes': { type: 'string', default: String(DEFAULT_MAX_LINE_BYTES) },
    'answer-budget-bytes': { type: 'string', default: String(ANSWER_BUDGET_BYTES) },
    'retention-ms': { type: 'string' },
    bwrap: { type: 'string' },
    'ws-auth': { type: 'string' },
    'ws-token-file': { type: 'string' },
    'ws-token-sha256': { type: 'string' },
    'ws-allow-origin': { type: 'string', multiple: true, default: [] as string[] },
    'detached-session-ttl-ms': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
    version: { type: 'boolean', short: 'v', default: false },
  } satisfies NonNullable<ParseArgsConfig['options']>;
}

function parseCliArgs(argv: string[], env: NodeJS.ProcessEnv) {
  const options = cliOptions(env);
  // How parents spawn it: the defaults, without loading node:util's parser at start-up.
  if (argv.length === 0) {
    const defaults = Object.entries(options).flatMap(([name, option]) => ('default' in option ? [[name, option.default]] : []));
    return { values: Object.fromEntries(defaults) as ReturnType<typeof parse>['values'] };
  }
  return parse(argv, options);
}

function parse(argv: string[], options: ReturnType<typeof cliOptions>) {
  return parseArgs({ args: argv, options, strict: true, allowPositionals: false });
}

export function parseCli(argv: string[], env: NodeJS.ProcessEnv = process.env): CliOptions {
  let values: ReturnType<typeof parseCliArgs>['values'];
  try {
    ({ values } = parseCliArgs(argv, env));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  // `stdio://` too, as Codex's listener spells it.
  const stdio = values.listen === 'stdio' || values.listen === 'stdio://';
  if (stdio) refuseWebSocketFlags(values);
  const webSocket = stdio ? undefined : webSocketOptions(values);
  const level = values['log-level']!;
  // --help and --version print and exit whatever the log level says.
  if (!isLogLevel(level) && !values.help && !values.version) {
    // Without the flag, the level came from the environment: name what the user set.
    const source = argv.some((arg) => arg === '--log-level' || arg.startsWith('--log-level=')) ? '--log-level' : 'EXEC_SERVER_LOG';
    throw new UsageError(`${source}: expected error, warn, info or debug, got "${level}"`);
  }
  const maxLineBytes = integerIn(values, 'max-line-bytes', MIN_MAX_LINE_BYTES, Number.MAX_SAFE_INTEGER);
  const answerBudgetBytes = integerIn(values, 'answer-budget-bytes', 1, Number.MAX_SAFE_INTEGER);
  const retentionMs = values['retention-ms'] === undefined ? undefined : integerIn(values, 'retention-ms', 0, MAX_TIMER_MS);
  const { help, version, bwrap } = values;
  // A mistyped --bwrap would otherwise show only as every sandboxed start refused.
  if (bwrap !== undefined && !help && !version && !isExecutableFile(bwrap))
    throw new UsageError(`--bwrap: ${bwrap} is not an executable file`);
  return {
    help: help!,
    version: version!,
    logLevel: isLogLevel(level) ? level : 'warn',
    maxLineBytes,
    answerBudgetBytes,
    retentionMs,
    bwrap,
    webSocket,
  };
}

type Values = ReturnType<typeof parseCliArgs>['values'];

/** The longest delay a Node timer takes (about 24.8 days); longer ones fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Plain decimal digits only (not `0x10`, `1e3`, ` 5 ` or empty, which Number() takes); NaN otherwise. */
function decimal(text: string | undefined): number {
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : Number.NaN;
}

/** The flags that mean something only to a WebSocket listener, refused over stdio rather than ignored. */
function refuseWebSocketFlags(values: Values): void {
  const flags = ['ws-auth', 'ws-token-file', 'ws-token-sha256', 'ws-allow-origin', 'detached-session-ttl-ms'] as const;
  const given = flags.find((flag) => {
    const value = values[flag];
    return Array.isArray(value) ? value.length > 0 : value !== undefined;
  });
  if (given !== undefined) throw new UsageError(`--${given} applies only to --listen ws://IP:PORT`);
}

/** The numeric flag `flag`, from `min` to `max`; a UsageError naming the flag and what it got otherwise. */
function integerIn(
  values: Values,
  flag: 'max-line-bytes' | 'answer-budget-bytes' | 'retention-ms' | 'detached-session-ttl-ms',
  min: number,
  max: number,
): number {
  const value = decimal(values[flag]);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`--${flag}: expected an integer from ${min} to ${max}, got "${values[flag]}"`);
  }
  return value;
}

function tokenHash(values: Values): Buffer | undefined {
  // Given, even empty: an empty value is a mistake to name, not an absent flag.
  if (values['ws-auth'] === undefined) {
    if (values['ws-token-file'] !== undefined || values['ws-token-sha256'] !== undefined)
      throw new UsageError('--ws-token-file and --ws-token-sha256 need --ws-auth capability-token');
    return undefined;
  }
  if (values['ws-auth'] !== 'capability-token') throw new UsageError(`--ws-auth: expected capability-token, got "${values['ws-auth']}"`);
  if (values['ws-token-file'] !== undefined && values['ws-token-sha256'] !== undefined)
    throw new UsageError('--ws-token-file and --ws-token-sha256: give one of them, not both');
  if (values['ws-token-sha256'] !== undefined) {
    if (!/^[0-9a-fA-F]{64}$/.test(values['ws-token-sha256'])) throw new UsageError('--ws-token-sha256: expected 64 hexadecimal digits');
    return Buffer.from(values['ws-token-sha256'], 'hex');
  }
  if (values['ws-token-file'] === undefined) throw new UsageError('--ws-auth capability-token needs --ws-token-file or --ws-token-sha256');
  let token: string;
  try {
    token = fs.readFileSync(values['ws-token-file'], 'utf8').trim();
  } catch (error) {
    throw new UsageError(`--ws-token-file: ${(error as Error).message}`);
  }
  if (token === '') throw new UsageError('--ws-token-file: the file is empty');
  return createHash('sha256').update(token).digest();
}

function webSocketOptions(values: Values): WebSocketCli {
  const match = /^ws:\/\/(\[[^\]]+\]|[^:/]+):(\d+)\/?$/.exec(values.listen!);
  if (!match) throw new UsageError(`--listen: expected stdio or ws://IP:PORT, got "${values.listen}"`);
  const host = match[1]!.replace(/^\[(.*)\]$/, '$1');
  const port = Number(match[2]);
  if (port > 65535) throw new UsageError(`--listen: port ${port} is out of range`);
  const tokenSha256 = tokenHash(values);
  const warnings = tokenFileWarnings(values['ws-token-file']);
  if (!tokenSha256 && !isLoopback(host)) {
    throw new UsageError(
      `--listen ${values.listen}: a non-loopback address needs --ws-auth capability-token (with --ws-token-file or --ws-token-sha256)`,
    );
  }
  const detachedTtlMs =
    values['detached-session-ttl-ms'] === undefined
      ? DEFAULT_DETACHED_TTL_MS
      : integerIn(values, 'detached-session-ttl-ms', 0, MAX_TIMER_MS);
  return { host, port, tokenSha256, allowedOrigins: values['ws-allow-origin'] ?? [], detachedTtlMs, warnings };
}

/** A token file that users other than its owner may read gives the token away (as ssh says of a key file). */
function tokenFileWarnings(file: string | undefined): string[] {
  const mode = file === undefined ? 0 : fs.statSync(file).mode & 0o777;
  if ((mode & 0o077) === 0) return [];
  return [`--ws-token-file ${file} can be read by users other than its owner (mode ${mode.toString(8).padStart(4, '0')}); chmod 600 it`];
}
