/**
 * The defaults of the server's limits and times, which the CLI's flags
 * override. A module of their own, so that the CLI's first part
 * (`cli/main.ts`) reads them without loading the server.
 */

/** The longest input line taken (`--max-line-bytes`). */
export const DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024;

/**
 * Bytes of answers a connection holds for a client that is not reading
 * (`--answer-budget-bytes`; `server/answer-budget.ts`): enough for any client
 * that reads its answers; a larger file waits until it is the only one held.
 */
export const ANSWER_BUDGET_BYTES = 64 * 1024 * 1024;

/** The largest block `fs/readBlock` reads and `fs/writeBlock` writes at once (the reference's bound). */
export const MAX_BLOCK_BYTES = 1024 * 1024;

/** How long each generation's reference keeps a closed process readable (measured: 30 s for 0.134, 80 s for 0.169). */
export const RETENTION_AFTER_CLOSE_MS = { 1: 30_000, 2: 80_000 } as const;

/** How long a dropped WebSocket connection's session waits for a resume (`--detached-session-ttl-ms`). */
export const DEFAULT_DETACHED_TTL_MS = 30_000;
