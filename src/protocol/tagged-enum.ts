/**
 * Generation 2's externally tagged enums (`mode`, `redirectPolicy`,
 * `signal`, and the sandbox's `network` and `windowsSandboxLevel`) as serde
 * reads them, with serde's error texts.
 */
import * as z from 'zod/mini';
import { describeValue2, VARIANT } from './decode.js';

/** How one enum is read: its names (any name, without), serde's words for them, and the value's. */
export interface UnitEnum {
  names?: readonly string[];
  expected: string;
  /** How serde describes a value here (``integer `5` `` or `number`, by how the reference parses the member). */
  describe?: (value: unknown) => string;
  /** Whether `{}` stands for the unit too (the reference takes it for some members). */
  emptyMapIsUnit?: boolean;
}

/**
 * The name read, or serde's words for why the value is none (`wrongType`:
 * neither a string nor a map; `notUnit`: the name's value in the map form is
 * not null, worded by how the generation shows that value).
 */
export type UnitVariantReading = { name: string } | { problem: string; wrongType: boolean; notUnit?: string };

const isMap = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A unit enum in either of serde's forms: the name (`"read"`), or a map from
 * the name to `null` (`{"read": null}`). The variant is checked before its
 * content, as serde does.
 */
export function readUnitVariant(
  value: unknown,
  { names, expected, describe = describeValue2, emptyMapIsUnit = false }: UnitEnum,
): UnitVariantReading {
  if (typeof value !== 'string' && !isMap(value))
    return { problem: `invalid type: ${describe(value)}, expected string or map`, wrongType: true };
  const entries: Array<[string, unknown]> = typeof value === 'string' ? [[value, null]] : Object.entries(value);
  const fail = (problem: string) => ({ problem, wrongType: false });
  if (entries.length !== 1) return fail('invalid value: map, expected map with a single key');
  const [name, unit] = entries[0]!;
  if (names && !names.includes(name)) return fail(`unknown variant \`${name}\`, expected ${expected}`);
  const isUnit = unit === null || (emptyMapIsUnit && isMap(unit) && Object.keys(unit).length === 0);
  return isUnit ? { name } : { problem: `invalid type: ${describe(unit)}, expected unit`, wrongType: false, notUnit: name };
}

/**
 * Generation 2's externally tagged enums as a schema (`readUnitVariant`);
 * without `values` any name passes (signals are looked up by the handler).
 */
export const taggedEnum = <const Values extends readonly [string, ...string[]]>(values: Values | undefined, expected: string) => {
  const name = values ? { enum: [...values] } : { type: 'string' };
  const mapForm = { type: 'object', minProperties: 1, maxProperties: 1, additionalProperties: { type: 'null' }, propertyNames: name };
  type Name = Values[number];
  // z.custom without a check takes any value: the transform checks it, with serde's words.
  return z.pipe(
    z.custom<Name | Partial<Record<Name, null>>>().register(z.globalRegistry, { anyOf: [name, mapForm] }),
    z.transform((input: Name | Partial<Record<Name, null>>, context): Name => {
      const read = readUnitVariant(input, { names: values, expected });
      if ('name' in read) return read.name as Name;
      // A wrong type is worded by the decoder, which names the field's type and shows the value as the
      // client's generation does (``integer `5` `` or `number`), also for the value under the name.
      if (read.notUnit !== undefined) context.issues.push({ code: 'custom', message: 'unit', input, path: [read.notUnit] });
      else context.issues.push({ code: 'custom', message: read.wrongType ? 'string or map' : `${VARIANT}${read.problem}`, input });
      return z.NEVER;
    }),
  );
};
