/**
 * An unbounded async queue: push values, iterate them with `for await`.
 * `end()` finishes the iteration once the queued values are consumed.
 */
export class EventQueue<T> implements AsyncIterable<T> {
  private readonly values: T[] = [];
  private head = 0;
  private readonly readers: Array<(result: IteratorResult<T>) => void> = [];
  private ended = false;

  push(value: T): void {
    if (this.ended) return;
    const reader = this.readers.shift();
    if (reader) reader({ value, done: false });
    else this.values.push(value);
  }

  end(): void {
    this.ended = true;
    for (const reader of this.readers.splice(0)) reader({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<T>> {
    if (this.head < this.values.length) {
      const value = this.values[this.head]!;
      this.values[this.head++] = undefined as T;
      if (this.head > 1024 && this.head * 2 > this.values.length) {
        this.values.splice(0, this.head);
        this.head = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => this.readers.push(resolve));
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return { next: () => this.next() };
  }
}
