/**
 * `metadata` on a generation-2 `process/start` (Codex's `ExecMetadata`: a
 * `threadId`, which is a UUID, and a `toolCallId`): checked as the reference
 * checks it, with its texts (uuid crate and serde), and otherwise not used. Serde also takes a
 * struct as a sequence of its fields in order (`[threadId, toolCallId]`).
 */
import { describeValue2 } from './decode.js';

const GROUP_STARTS = [0, 9, 14, 19, 24];
const GROUP_LENGTHS = [8, 4, 4, 4, 12];

/**
 * Why the uuid crate would not parse `text` (its `InvalidUuid::into_err`),
 * or undefined when it would: simple (32 hex), hyphenated, braced or
 * `urn:uuid:` hyphenated.
 */
function uuidProblem(text: string): string | undefined {
  const [inner, offset, simple] =
    text.startsWith('{') && text.endsWith('}') && text.length > 1
      ? [text.slice(1, -1), 1, false]
      : text.startsWith('urn:uuid:')
        ? [text.slice(9), 9, false]
        : [text, 0, true];
  const bounds: number[] = [];
  let hyphens = 0;
  for (let index = 0; index < inner.length; index++) {
    const character = inner[index]!;
    if (character === '-') {
      if (hyphens < 4) bounds.push(index);
      hyphens++;
    } else if (!/[0-9a-fA-F]/.test(character)) {
      return `invalid character: expected an optional prefix of \`urn:uuid:\` followed by [0-9a-fA-F-], found \`${character}\` at ${index + offset + 1}`;
    }
  }
  if (hyphens === 0 && simple)
    return text.length === 32 ? undefined : `invalid length: expected length 32 for simple format, found ${text.length}`;
  if (hyphens !== 4) return `invalid group count: expected 5, found ${hyphens + 1}`;
  for (let group = 0; group < 4; group++) {
    if (bounds[group] !== GROUP_STARTS[group + 1]! - 1) {
      return `invalid group length in group ${group}: expected ${GROUP_LENGTHS[group]}, found ${bounds[group]! - GROUP_STARTS[group]!}`;
    }
  }
  const last = inner.length - GROUP_STARTS[4]!;
  return last === 12 ? undefined : `invalid group length in group 4: expected 12, found ${last}`;
}

/** A field's problem, as a whole sentence, or undefined. */
function fieldProblem(value: unknown, uuid: boolean): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'string') return `invalid type: ${describeValue2(value)}, expected a string`;
  return uuid ? uuidProblem(value) : undefined;
}

/**
 * What is wrong with a generation-2 `metadata`, as a whole sentence, or
 * undefined. Generation 1 (Codex 0.134) ignored the member, so only a
 * generation-2 session asks.
 */
export function execMetadataProblem(input: unknown): string | undefined {
  if (input === null || input === undefined) return undefined;
  if (typeof input !== 'object') return `invalid type: ${describeValue2(input)}, expected struct ExecMetadata`;
  if (Array.isArray(input) && input.length > 2) return `invalid length ${input.length}, expected fewer elements in array`;
  const [threadId, toolCallId] = Array.isArray(input)
    ? [input[0], input[1]]
    : [(input as Record<string, unknown>).threadId, (input as Record<string, unknown>).toolCallId];
  return fieldProblem(threadId, true) ?? fieldProblem(toolCallId, false);
}
