/** Command-line flags of `exec-server` (node:util parseArgs: no dependency needed). */
import { parseArgs } from 'node:util';
import { isLogLevel, type LogLevel } from '../server/logger.js';
import { RETENTION_AFTER_CLOSE_MS } from '../server/process/process-manager.js';
import { DEFAULT_MAX_LINE_BYTES } from '../transport/line-reader.js';

const MIN_MAX_LINE_BYTES = 64 * 1024 * 1024;

export interface CliOptions {
  help: boolean;
  version: boolean;
  logLevel: LogLevel;
  maxLineBytes: number;
  retentionMs: number;
  bwrap: string | undefined;
}

export const USAGE = `Usage: exec-server [options]

Runs an exec-server on stdin/stdout: one JSON-RPC message per line.

Options:
  --listen stdio          transport (only stdio; accepted for compatibility)
  --log-level LEVEL       error | warn | info | debug (default: warn; env EXEC_SERVER_LOG)
  --max-line-bytes N      longest accepted input line (default: ${DEFAULT_MAX_LINE_BYTES}, minimum ${MIN_MAX_LINE_BYTES})
  --retention-ms N        how long a closed process stays readable (default: ${RETENTION_AFTER_CLOSE_MS})
  --bwrap PATH            the bubblewrap that enforces sandbox policies (default: bwrap on PATH)
  -h, --help              show this help
  -v, --version           show the version
`;

export class UsageError extends Error {}

function parseCliArgs(argv: string[], env: NodeJS.ProcessEnv) {
  return parseArgs({
    args: argv,
    options: {
      listen: { type: 'string', default: 'stdio' },
      'log-level': { type: 'string', default: env.EXEC_SERVER_LOG ?? 'warn' },
      'max-line-bytes': { type: 'string', default: String(DEFAULT_MAX_LINE_BYTES) },
      'retention-ms': { type: 'string', default: String(RETENTION_AFTER_CLOSE_MS) },
      bwrap: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
      version: { type: 'boolean', short: 'v', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
}

export function parseCli(argv: string[], env: NodeJS.ProcessEnv = process.env): CliOptions {
  let values: ReturnType<typeof parseCliArgs>['values'];
  try {
    ({ values } = parseCliArgs(argv, env));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.listen !== 'stdio') throw new UsageError(`--listen: only "stdio" is supported, got "${values.listen}"`);
  const level = values['log-level']!;
  if (!isLogLevel(level)) throw new UsageError(`--log-level: expected error, warn, info or debug, got "${level}"`);
  const maxLineBytes = Number(values['max-line-bytes']);
  if (!Number.isInteger(maxLineBytes) || maxLineBytes < MIN_MAX_LINE_BYTES) {
    throw new UsageError(`--max-line-bytes: expected an integer >= ${MIN_MAX_LINE_BYTES}, got "${values['max-line-bytes']}"`);
  }
  const retentionMs = Number(values['retention-ms']);
  if (!Number.isInteger(retentionMs) || retentionMs < 0) {
    throw new UsageError(`--retention-ms: expected a non-negative integer, got "${values['retention-ms']}"`);
  }
  return { help: values.help!, version: values.version!, logLevel: level, maxLineBytes, retentionMs, bwrap: values.bwrap };
}
