/**
 * Request ids that cannot go through vscode-jsonrpc as they came: an
 * integer beyond 2^53, which a JS number would round (the answer must echo
 * it exactly), and an id equal to one still unanswered, which vscode-jsonrpc
 * (keying requests by `String(id)`) would let replace the earlier request.
 * Each goes through as an alias, a string no client sends, and the writer
 * puts the id back as it came.
 */
import { randomUuid } from '../protocol/random-ids.js';

export class WireIds {
  private readonly prefix = `\u0000id-${randomUuid()}-`;
  private next = 0;
  /** Alias → the id's JSON text as it came. */
  private readonly texts = new Map<string, string>();

  /** An alias that stands for the id whose JSON text is `text`. */
  alias(text: string): string {
    const alias = `${this.prefix}${this.next++}`;
    this.texts.set(alias, text);
    return alias;
  }

  /** The JSON text an alias stands for; undefined for any id that is not one. */
  textOf(id: unknown): string | undefined {
    return typeof id === 'string' && id.startsWith(this.prefix) ? this.texts.get(id) : undefined;
  }

  /** The JSON text of `id` as the client sent it (an alias's, or its own). */
  wireText(id: unknown): string {
    return this.textOf(id) ?? JSON.stringify(id);
  }

  /** The alias's answer is out: it stands for nothing any more. */
  release(id: unknown): void {
    if (this.textOf(id) !== undefined) this.texts.delete(id as string);
  }
}
