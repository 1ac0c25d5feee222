/**
 * How many bytes of file contents a connection may hold in answers its
 * client has not taken yet. `fs/readFile` reserves a file's size before it
 * reads it and gives it back once the line writer has sent the answer, so
 * that a client asking for many large files without reading the answers
 * holds the server to about this much (the input hold, `input-hold.ts`,
 * bounds only how many requests are read, not how large their answers are).
 */

/** Enough for any client that reads its answers; a larger file waits until it is the only one held. */
export const ANSWER_BUDGET_BYTES = 64 * 1024 * 1024;

export class AnswerBudget {
  private held = 0;
  private readonly waiting: { bytes: number; grant: () => void }[] = [];

  constructor(private readonly limitBytes: number) {}

  /** Bytes reserved and not yet given back. */
  get reserved(): number {
    return this.held;
  }

  /**
   * Resolves, in the order asked, once `bytes` fit (or nothing else is
   * held), with the function that gives them back (once, however often called).
   */
  reserve(bytes: number): Promise<() => void> {
    return new Promise((resolve) => {
      const grant = () => {
        this.held += bytes;
        let given = false;
        resolve(() => {
          if (given) return;
          given = true;
          this.held -= bytes;
          this.grantWaiting();
        });
      };
      if (this.waiting.length === 0 && this.fits(bytes)) grant();
      else this.waiting.push({ bytes, grant });
    });
  }

  private fits(bytes: number): boolean {
    return this.held === 0 || this.held + bytes <= this.limitBytes;
  }

  private grantWaiting(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.bytes)) this.waiting.shift()!.grant();
  }
}
