/**
 * Params decoding: zod does the checking, this file words the errors the way
 * serde (the reference) does, always naming the offending field.
 *
 * Every leaf schema in `schemas.ts` reports its expected type as its error
 * message (`"a string"`, `"u64"`, …); a message starting with `!` is a
 * complete sentence of its own (range checks such as `rows and cols …`).
 */
import type { z } from 'zod';
import { Errors, type ProtocolError } from './errors.js';

export const LITERAL = '!';

/** How serde describes a JSON value it did not expect. */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return `boolean \`${value}\``;
  if (typeof value === 'number') {
    return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
  }
  if (typeof value === 'string') return `string ${JSON.stringify(value)}`;
  if (Array.isArray(value)) return 'sequence';
  return 'map';
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function fieldName(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}

function wordIssue(issue: z.core.$ZodIssue, params: unknown, structName: string): string {
  const path = issue.path;
  const value = valueAt(params, path);
  if (path.length === 0) return `invalid type: ${describeValue(params)}, expected struct ${structName}`;
  if (issue.message.startsWith(LITERAL)) return issue.message.slice(LITERAL.length);
  const key = String(path[path.length - 1]);
  if (value === undefined) {
    const parent = path.slice(0, -1);
    return parent.length === 0 ? `missing field \`${key}\`` : `${fieldName(parent)}: missing field \`${key}\``;
  }
  const expected = issue.message;
  const isNegativeForUnsigned = typeof value === 'number' && Number.isInteger(value) && value < 0 && /^u(64|size|32)$/.test(expected);
  const what = isNegativeForUnsigned ? `invalid value: ${describeValue(value)}` : `invalid type: ${describeValue(value)}`;
  return `${fieldName(path)}: ${what}, expected ${expected}`;
}

/**
 * Decodes `params` with `schema`, or throws a −32602 `ProtocolError` whose
 * message names the first offending field.
 */
export function decodeParams<T extends z.ZodType>(schema: T, params: unknown, structName: string): z.output<T> {
  const result = schema.safeParse(params ?? null);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  const message = first ? wordIssue(first, params ?? null, structName) : 'invalid params';
  throw Errors.invalidParams(message) satisfies ProtocolError;
}
