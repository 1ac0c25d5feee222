export { ExecServer, type ExecServerOptions, type NotificationChannel } from './exec-server.js';
export { createStderrLogger, silentLogger, isLogLevel, LOG_LEVELS, type Logger, type LogLevel } from './logger.js';
export { ProcessManager } from './process/process-manager.js';
