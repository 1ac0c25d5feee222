/**
 * The id at the head of an answer's line, read without parsing the line:
 * a line too long to keep is dropped, and its request must still fail with
 * an error that names it (servers write `id` first).
 */
const ID_HEAD_BYTES = 256;

/** The id an answer's line starts with (servers write it first), if it does; `pieces` are the line's first ones. */
export function answerIdOf(pieces: Buffer[]): number | string | undefined {
  let taken = 0;
  const head: Buffer[] = [];
  for (const piece of pieces) {
    if (taken >= ID_HEAD_BYTES) break;
    head.push(piece.subarray(0, ID_HEAD_BYTES - taken));
    taken += head.at(-1)!.length;
  }
  const match = /^\{"id":(\d{1,15}|"[^"\\]{0,200}")[,}]/.exec(Buffer.concat(head).toString('latin1'));
  if (!match) return undefined;
  return match[1]!.startsWith('"') ? match[1]!.slice(1, -1) : Number(match[1]);
}
