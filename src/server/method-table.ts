/** One entry per method: how to decode its params and what to run. */
import type { z } from 'zod';

export interface MethodHandler<S extends z.ZodType = z.ZodType> {
  schema: S;
  /** The struct name serde reports for absent or null params. */
  struct: string;
  run(params: z.output<S>): unknown;
}

export type MethodTable = Record<string, MethodHandler>;

/** Builds a table entry, keeping `run`'s params typed by the schema. */
export function method<S extends z.ZodType>(schema: S, struct: string, run: (params: z.output<S>) => unknown): MethodHandler {
  return { schema, struct, run } as MethodHandler;
}
