/** Levelled logging to stderr: stdout belongs to the protocol. */
const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Logger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  log(message: string): void;
  debug(message: string): void;
}

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

export function createStderrLogger(level: LogLevel = 'warn'): Logger {
  const threshold = LOG_LEVELS.indexOf(level);
  const emit = (at: LogLevel) => (message: string) => {
    if (LOG_LEVELS.indexOf(at) <= threshold) process.stderr.write(`exec-server ${at}: ${message}\n`);
  };
  return { error: emit('error'), warn: emit('warn'), info: emit('info'), log: emit('info'), debug: emit('debug') };
}

export const silentLogger: Logger = { error() {}, warn() {}, info() {}, log() {}, debug() {} };
