/**
 * Generation 2's externally tagged enums (`mode`, `redirectPolicy`,
 * `signal`) as serde reads them, with serde's error texts.
 */
import * as z from 'zod';
import { describeValue2, VARIANT } from './decode.js';

/**
 * Generation 2's externally tagged enums, in either of serde's forms: the
 * name (`"read"`), or a map from the name to `null` (`{"read": null}`). The
 * variant is checked before its content, as serde does; without `values`
 * any name passes (signals are looked up by the handler).
 */
export const taggedEnum = <const Values extends readonly [string, ...string[]]>(values: Values | undefined, expected: string) => {
  const name = values ? { enum: [...values] } : { type: 'string' };
  const mapForm = { type: 'object', minProperties: 1, maxProperties: 1, additionalProperties: { type: 'null' }, propertyNames: name };
  type Name = Values[number];
  // z.custom without a check takes any value: the transform checks it, with serde's words.
  return z
    .custom<Name | Partial<Record<Name, null>>>()
    .meta({ anyOf: [name, mapForm] })
    .transform((input, context): Name => {
      const fail = (message: string) => {
        context.addIssue({ code: 'custom', message, input });
        return z.NEVER;
      };
      const isMap = typeof input === 'object' && input !== null && !Array.isArray(input);
      if (typeof input !== 'string' && !isMap) return fail('string or map');
      const entries: Array<[string, unknown]> = isMap ? Object.entries(input) : [[input as string, null]];
      if (entries.length !== 1) return fail(`${VARIANT}invalid value: map, expected map with a single key`);
      const [name, unit] = entries[0]!;
      if (values && !(values as readonly string[]).includes(name))
        return fail(`${VARIANT}unknown variant \`${name}\`, expected ${expected}`);
      if (unit !== null) return fail(`${VARIANT}invalid type: ${describeValue2(unit)}, expected unit`);
      return name as Name;
    });
};
