/**
 * A single-consumer async queue between the orchestrator (producer, on its polling loop) and one
 * `generate()` call (consumer). `close()` ends the stream after what was queued; `fail()` makes the
 * next read throw. Either may come while the consumer is waiting, which is how an abort or a
 * shutdown wakes a generator that is blocked on its next output.
 */
export class RequestStream<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiter: { resolve: (result: IteratorResult<T>) => void; reject: (error: unknown) => void } | undefined;
  private closed = false;
  private failure: { error: unknown } | undefined;

  get isOpen(): boolean {
    return !this.closed && this.failure === undefined;
  }

  push(item: T): void {
    if (!this.isOpen) return;
    if (this.waiter !== undefined) {
      const { resolve } = this.waiter;
      this.waiter = undefined;
      resolve({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  close(): void {
    if (!this.isOpen) return;
    this.closed = true;
    if (this.waiter !== undefined && this.items.length === 0) {
      const { resolve } = this.waiter;
      this.waiter = undefined;
      resolve({ value: undefined, done: true });
    }
  }

  fail(error: unknown): void {
    if (!this.isOpen) return;
    this.failure = { error };
    if (this.waiter !== undefined) {
      const { reject } = this.waiter;
      this.waiter = undefined;
      reject(error);
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => this.read(),
      return: async () => {
        this.close();
        this.items.length = 0;
        return { value: undefined, done: true };
      },
    };
  }

  private read(): Promise<IteratorResult<T>> {
    if (this.failure !== undefined) return Promise.reject(this.failure.error);
    if (this.items.length > 0) return Promise.resolve({ value: this.items.shift() as T, done: false });
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    if (this.waiter !== undefined) return Promise.reject(new Error('RequestStream supports a single reader'));
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }
}
