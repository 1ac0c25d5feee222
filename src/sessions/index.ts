export {
  CommandSessions,
  CommandSessionError,
  DEFAULT_TIMEOUT_MS,
  MAX_TIMEOUT_MS,
  OUTPUT_MAX_BYTES,
  type CommandSessionsOptions,
  type ExecRequest,
  type ExecResult,
} from './command-sessions.js';
