/**
 * What JSON.parse lets through but the reference (serde_json) refuses, or
 * loses on the way: a `\u` escape of a lone surrogate (it would become
 * U+FFFD in a path or an argument), and an id whose text is no i64 integer
 * (`1.0`, `1e3`) or whose value a JS number cannot hold exactly.
 */
import { Errors, type ProtocolError } from '../protocol/errors.js';
import type { WireIds } from './wire-ids.js';

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
const INTEGER_TEXT = /^-?(0|[1-9][0-9]*)$/;

/** The fault in `value` (parsed from `text`), or undefined; an id beyond 2^53 becomes an alias in `ids`. */
export function lexicalFault(value: unknown, text: string, ids: WireIds | undefined): ProtocolError | undefined {
  if (hasLoneSurrogateEscape(text)) return Errors.parseError('lone surrogate in a \\u escape');
  if (ids === undefined) return undefined;
  const id = numericId(value, text);
  if (id === 'invalid') return Errors.invalidMessage('"id" must be a string or a 64-bit integer');
  // Only a request is answered, which releases the alias (anything else is answered with id null, or not at all).
  if (id !== undefined && 'method' in (value as object) && typeof (value as { method?: unknown }).method === 'string')
    (value as { id: unknown }).id = ids.alias(id.beyondJs);
  return undefined;
}

/**
 * Whether `value` (parsed from `text`) needs none of the above: the large-line path, which
 * takes it without them, leaves any other line to the ordinary path.
 */
export function isLexicallyPlain(value: unknown, text: string): boolean {
  return !hasLoneSurrogateEscape(text) && numericId(value, text) === undefined;
}

/**
 * What a numeric id needs: nothing (undefined: no numeric id, or one a JS number holds
 * exactly), `invalid` (its text is no i64 integer), or its text, where the number is beyond 2^53.
 */
function numericId(value: unknown, text: string): 'invalid' | { beyondJs: string } | undefined {
  if (value === null || typeof value !== 'object' || !('id' in value) || typeof value.id !== 'number') return undefined;
  const idText = idTextOf(text, value.id);
  if (idText === undefined || !INTEGER_TEXT.test(idText)) return 'invalid';
  if (Number.isSafeInteger(value.id)) return undefined; // the common case: no BigInt made per request
  const exact = BigInt(idText);
  return exact < I64_MIN || exact > I64_MAX ? 'invalid' : { beyondJs: idText };
}

const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * Whether valid JSON `text` has a `\u` escape of a surrogate that is not one half of a pair
 * (UTF-8 itself cannot carry one). A scan of the text: no walk of the parsed value, whose
 * depth a line chooses.
 */
function hasLoneSurrogateEscape(text: string): boolean {
  let pendingHigh = false;
  let afterPendingHigh = -1;
  for (let at = text.indexOf('\\u'); at !== -1; at = text.indexOf('\\u', at + 2)) {
    let backslashes = 1;
    while (text.charCodeAt(at - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) continue; // an escaped backslash, then a plain `u`
    const unit = Number.parseInt(text.slice(at + 2, at + 6), 16);
    if (pendingHigh && (at !== afterPendingHigh || !isLowSurrogate(unit))) return true;
    if (pendingHigh) {
      pendingHigh = false;
      continue;
    }
    if (isLowSurrogate(unit)) return true;
    pendingHigh = isHighSurrogate(unit);
    afterPendingHigh = at + 6;
  }
  return pendingHigh;
}

/**
 * The text of the top-level `"id"` member's value: where a line starts with
 * it (as clients write it) at once, else by a scan of the top-level members
 * (the last `id`, as JSON.parse takes it).
 */
function idTextOf(text: string, parsed: number): string | undefined {
  const head = /^\{"id":(-?[0-9][0-9.eE+-]*)[,}]/.exec(text);
  if (head && Number(head[1]) === parsed) return head[1];
  return scanTopLevelId(text);
}

function scanTopLevelId(text: string): string | undefined {
  let found: string | undefined;
  let at = skipSpace(text, text.indexOf('{') + 1);
  while (at < text.length && text[at] === '"') {
    const keyEnd = stringEnd(text, at);
    const key = JSON.parse(text.slice(at, keyEnd)) as string;
    const valueStart = skipSpace(text, skipSpace(text, keyEnd) + 1); // past the colon
    const valueEnd = valueEndOf(text, valueStart);
    if (key === 'id') found = text.slice(valueStart, valueEnd).trim();
    at = skipSpace(text, valueEnd);
    if (text[at] !== ',') break;
    at = skipSpace(text, at + 1);
  }
  return found;
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && (text[at] === ' ' || text[at] === '\t' || text[at] === '\n' || text[at] === '\r')) at++;
  return at;
}

/** Just past the string that opens at `at`. */
function stringEnd(text: string, at: number): number {
  for (let quote = text.indexOf('"', at + 1); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0;
    while (text[quote - 1 - backslashes] === '\\') backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
  }
  return text.length;
}

/** Just past the value that starts at `at`. */
function valueEndOf(text: string, at: number): number {
  if (text[at] === '"') return stringEnd(text, at);
  if (text[at] !== '{' && text[at] !== '[') {
    let end = at;
    while (end < text.length && text[end] !== ',' && text[end] !== '}') end++;
    return end;
  }
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    const char = text[i];
    if (char === '"') i = stringEnd(text, i) - 1;
    else if (char === '{' || char === '[') depth++;
    else if ((char === '}' || char === ']') && --depth === 0) return i + 1;
  }
  return text.length;
}
