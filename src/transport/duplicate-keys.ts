/**
 * JSON.parse keeps the last of two equal keys in an object; the reference's
 * parser refuses the line. Where that matters, a request whose `sandbox` (or
 * a member inside it) came twice, the last one `null` or `disabled`, would
 * run unconfined here and not at all there: such lines are looked at for
 * duplicate keys before they are taken (`line-reader.ts`).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/**
 * Whether a line may carry a sandbox policy, under any spelling of its key
 * (a `\u` escape can spell any key).
 */
export const mayCarrySandbox = (text: string): boolean => text.includes('"sandbox"') || text.includes('\\u');

/** The index of the quote that closes the string opening at `start`. */
function endOfString(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  for (;;) {
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

/** The first key that comes twice in one object of `text`, which must be valid JSON; undefined if none does. */
export function duplicateKey(text: string): string | undefined {
  // One entry per open container: the keys seen for an object, undefined for an array.
  const open: Array<Set<string> | undefined> = [];
  let expectingKey = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      const end = endOfString(text, i);
      const keys = open[open.length - 1];
      if (keys && expectingKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (keys.has(key)) return key;
        keys.add(key);
        expectingKey = false;
      }
      i = end;
    } else if (code === OPEN_BRACE) {
      open.push(new Set());
      expectingKey = true;
    } else if (code === OPEN_BRACKET) {
      open.push(undefined);
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      open.pop();
    } else if (code === COMMA) {
      expectingKey = open[open.length - 1] !== undefined;
    }
  }
  return undefined;
}
