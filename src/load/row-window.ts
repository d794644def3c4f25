/**
 * The rows of a step under way, at most `size` of them: the step's reader hands a row on and,
 * once that many are on their way, waits for one to end before it reads the next.
 *
 * A count and one waiter, rather than `Promise.race` over the rows under way: a race adds a
 * reaction to every row's promise each time it is called, so with 64 rows under way each row
 * ended up carrying dozens of them, and settling it ran as many callbacks (most of the promise
 * work an imported record cost; see docs/benchmarks.md).
 */
export class RowWindow {
  #count = 0;
  #waiter: { below: number; wake: () => void } | null = null;

  constructor(readonly size: number) {}

  /** Rows under way. */
  get count(): number {
    return this.#count;
  }

  /**
   * Counts `task` as under way until it settles. A row handles its own errors (a failure ends
   * the run through the run's context), so a rejection here only ends the row's count.
   */
  add(task: Promise<void>): void {
    this.#count += 1;
    task.then(this.#end, this.#end);
  }

  /** Whether a row read now would wait for room: `size` rows are under way. */
  get full(): boolean {
    return this.#count >= this.size;
  }

  /** Resolves once fewer than `size` rows are under way. */
  room(): Promise<void> {
    return this.#below(this.size);
  }

  /** Resolves once no row is under way. */
  drained(): Promise<void> {
    return this.#below(1);
  }

  #below(limit: number): Promise<void> {
    if (this.#count < limit) return Promise.resolve();
    if (this.#waiter) throw new Error('RowWindow: one waiter at a time');
    return new Promise<void>((wake) => {
      this.#waiter = { below: limit, wake };
    });
  }

  readonly #end = (): void => {
    this.#count -= 1;
    const waiter = this.#waiter;
    if (waiter && this.#count < waiter.below) {
      this.#waiter = null;
      waiter.wake();
    }
  };
}
