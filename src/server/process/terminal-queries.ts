/**
 * The status queries a program sends its terminal, answered as Codex 0.169's
 * exec-server answers them for a generation-2 client's PTY: a TUI that asks
 * where its cursor is (crossterm, prompt_toolkit) would otherwise wait for an
 * answer that never comes. As there, each query is taken out of the output
 * and answered on the terminal's input, also when it comes split across
 * reads; other sequences pass unchanged.
 *
 * - `ESC[6n` (cursor position): `ESC[1;1R`, as the reference answers it
 *   wherever the cursor is (no screen is kept here);
 * - `ESC[5n` (status): `ESC[0n`, "OK";
 * - `ESC[18t` (text area size): `ESC[8;<rows>;<cols>t`.
 */

const ESC = 0x1b;
const BRACKET = 0x5b;
/** The first parameter bytes of the queries (`6n`, `5n`, `18t`): any other sequence is passed over at once. */
const FIRST_BYTES = new Set([0x36, 0x35, 0x31]);
type Size = { rows: number; cols: number };
/** Each query and its answer. */
const QUERIES: Array<{ bytes: Buffer; answer: (size: Size) => string }> = [
  { bytes: Buffer.from('\x1b[6n', 'latin1'), answer: () => '\x1b[1;1R' },
  { bytes: Buffer.from('\x1b[5n', 'latin1'), answer: () => '\x1b[0n' },
  { bytes: Buffer.from('\x1b[18t', 'latin1'), answer: ({ rows, cols }) => `\x1b[8;${rows};${cols}t` },
];
const LONGEST = Math.max(...QUERIES.map((query) => query.bytes.length));
const NOTHING = Buffer.alloc(0);

export class TerminalQueries {
  /** The end of the last read, held back: it may begin a query that the next read completes. */
  private held = NOTHING;

  constructor(
    /** Writes an answer to the terminal's input. */
    private readonly answer: (bytes: Buffer) => void,
    /** The terminal's size now. */
    private readonly size: () => Size,
  ) {}

  /** The output of a read without the queries it holds (which are answered). */
  filter(read: Buffer): Buffer {
    const bytes = this.held.length > 0 ? Buffer.concat([this.held, read]) : read;
    this.held = NOTHING;
    if (bytes.indexOf(ESC) === -1) return bytes;
    const kept: Buffer[] = [];
    let from = 0;
    for (let at = bytes.indexOf(ESC); at !== -1; at = bytes.indexOf(ESC, at + 1)) {
      // Colour and cursor sequences are most of a TUI's output: two byte checks pass them over.
      const cut = at + 2 >= bytes.length;
      if (!cut && (bytes[at + 1] !== BRACKET || !FIRST_BYTES.has(bytes[at + 2]!))) continue;
      const query = QUERIES.find((candidate) => startsWith(bytes, at, candidate.bytes));
      if (query) {
        kept.push(bytes.subarray(from, at));
        this.answer(Buffer.from(query.answer(this.size()), 'latin1'));
        from = at + query.bytes.length;
        at = from - 1;
      } else if (bytes.length - at < LONGEST && QUERIES.some((candidate) => isPrefix(bytes.subarray(at), candidate.bytes))) {
        kept.push(bytes.subarray(from, at));
        this.held = Buffer.from(bytes.subarray(at));
        from = bytes.length;
        break;
      }
    }
    kept.push(bytes.subarray(from));
    return kept.length === 1 ? kept[0]! : Buffer.concat(kept);
  }

  /** What is held back, once no read can complete it (the terminal closed). */
  flush(): Buffer {
    const held = this.held;
    this.held = NOTHING;
    return held;
  }
}

function startsWith(bytes: Buffer, at: number, prefix: Buffer): boolean {
  return bytes.length - at >= prefix.length && bytes.compare(prefix, 0, prefix.length, at, at + prefix.length) === 0;
}

/** Whether `tail` (shorter than `query`) is how `query` begins. */
function isPrefix(tail: Buffer, query: Buffer): boolean {
  return tail.length < query.length && query.compare(tail, 0, tail.length, 0, tail.length) === 0;
}
