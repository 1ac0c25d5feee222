/** What the method table (`methods.ts`) says of each method and notification. */
import type { z } from 'zod/mini';
import type { ResultSchemas } from './results.js';

/** The name of a schema in `results.ts`. */
export type ResultName = keyof ResultSchemas;

/** 1: Codex 0.134's protocol (PROTOCOL.md); 2: Codex 0.169's (PROTOCOL-V2.md). */
export type Generation = 1 | 2;
/** The family named in "client must call initialize before using <family> methods" (§2.3). */
export type GateFamily = 'exec' | 'filesystem' | 'http' | 'environment';

export interface MethodSpec<
  Params extends z.ZodMiniType = z.ZodMiniType,
  Result extends ResultName = ResultName,
  Family extends GateFamily | undefined = GateFamily | undefined,
> {
  readonly params: Params;
  /** The struct serde names in "invalid type: …, expected struct X". */
  readonly struct: string;
  /** Its name in generation 2, where it differs (Codex 0.169 renamed some to `Wire…`). */
  readonly structV2?: string;
  /** The name of its result schema in `results.ts` (built on first use: the server never needs it). */
  readonly result: Result;
  /** Undefined: callable before the handshake completes. */
  readonly family: Family;
  /** The protocol generations whose clients send it (an extension of ours is listed under 1). */
  readonly generations: readonly Generation[];
  /**
   * Whether a client may send it again when its connection dropped with the
   * request in flight (the first may or may not have been carried out):
   * `safe` (reads, and calls whose repeat changes nothing), `withWriteId`
   * (a `process/write` carrying a `writeId`, which the server applies once),
   * `never` (its outcome is unknown; the caller must decide).
   */
  readonly retry: 'safe' | 'withWriteId' | 'never';
  readonly summary: string;
}

export const BOTH = [1, 2] as const;
