/**
 * Params decoding: zod does the checking, this file words the errors the way
 * serde (the reference) does.
 *
 * Every leaf schema in `schemas.ts` reports its expected type as its error
 * message (`"a string"`, `"u64"`, …); a message starting with `!` is a
 * complete sentence of its own (range checks such as `rows and cols …`), one
 * starting with `~` a sentence about the value (an unknown enum variant).
 *
 * The generations word values differently (PROTOCOL-V2.md §1d): generation
 * 1 shows a number (`invalid type: integer \`5\`, expected a string`),
 * generation 2 does not (`invalid type: number, expected a string`; `invalid
 * number` for a negative or fractional one where an unsigned one belongs).
 * Unlike the reference, every message names the offending field.
 */
import type { z } from 'zod/mini';
import { Errors, ErrorTexts, type ProtocolError } from './errors.js';
import { notAPathError } from './path-uri.js';

export const LITERAL = '!';
export const VARIANT = '~';

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

/** How serde_json describes a value in generation 2, where numbers are not shown. */
export function describeValue2(value: unknown): string {
  return typeof value === 'number' ? 'number' : describeValue(value);
}

function wordIssue(issue: z.core.$ZodIssue, params: unknown, structName: string, generation: 1 | 2): string {
  const path = issue.path;
  const value = valueAt(params, path);
  const describe = generation === 2 ? describeValue2 : describeValue;
  if (issue.message.startsWith(LITERAL)) {
    const sentence = issue.message.slice(LITERAL.length);
    return generation === 2 && sentence === ErrorTexts.relativePath ? notAPathError(value).message : sentence;
  }
  if (path.length === 0) return `invalid type: ${describe(params)}, expected struct ${structName}`;
  // Unlike the reference, both generations name the field (PROTOCOL.md §1.4 asks for it).
  const field = (at: readonly PropertyKey[], text: string) => (at.length === 0 ? text : `${fieldName(at)}: ${text}`);
  if (issue.message.startsWith(VARIANT)) return field(path, issue.message.slice(VARIANT.length));
  const key = String(path[path.length - 1]);
  if (value === undefined) return field(path.slice(0, -1), `missing field \`${key}\``);
  // Generation 2 reads a path as a string first, then as a URI.
  const expected = generation === 2 && issue.message === 'path string' ? 'a string' : issue.message;
  const isUnsigned = /^u(64|size|32|16)$/.test(expected);
  if (generation === 2 && isUnsigned && typeof value === 'number') return field(path, 'invalid number');
  const isNegativeForUnsigned = isUnsigned && typeof value === 'number' && Number.isInteger(value) && value < 0;
  const what = isNegativeForUnsigned ? `invalid value: ${describe(value)}` : `invalid type: ${describe(value)}`;
  return field(path, `${what}, expected ${expected}`);
}

/**
 * Where serde meets an issue, as a sort key: members in the order they
 * arrived, elements by index, and a missing member only once the rest of its
 * object has been read (serde checks for them at the end of the map).
 */
function arrivalOrder(issue: z.core.$ZodIssue, params: unknown): number[] {
  const order: number[] = [];
  let current = params;
  for (const key of issue.path) {
    if (current === null || typeof current !== 'object') break;
    const at = Array.isArray(current) ? Number(key) : Object.keys(current).indexOf(String(key));
    order.push(at < 0 ? Number.MAX_SAFE_INTEGER : at);
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return order;
}

function isBefore(a: number[], b: number[]): boolean {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return a.length < b.length;
}

/** The issue serde would report: the first it meets reading the params (zod's order among equals). */
function firstMet(issues: readonly z.core.$ZodIssue[], params: unknown): z.core.$ZodIssue | undefined {
  let first: { issue: z.core.$ZodIssue; order: number[] } | undefined;
  for (const issue of issues) {
    const order = arrivalOrder(issue, params);
    if (!first || isBefore(order, first.order)) first = { issue, order };
  }
  return first?.issue;
}

/**
 * Decodes `params` with `schema`, or throws a −32602 `ProtocolError` whose
 * message names the offending field serde would name first.
 */
export function decodeParams<T extends z.ZodMiniType>(schema: T, params: unknown, structName: string, generation: 1 | 2 = 1): z.output<T> {
  const result = schema.safeParse(params ?? null);
  if (result.success) return result.data;
  const first = firstMet(result.error.issues, params ?? null);
  const message = first ? wordIssue(first, params ?? null, structName, generation) : 'invalid params';
  throw Errors.invalidParams(message) satisfies ProtocolError;
}
