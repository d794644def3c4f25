/**
 * The one concurrency limiter of crm-ferry. The write slots of a run: at most `size` rows
 * (`--concurrency`) sending at once, the others waiting in the order they asked; rollback's and
 * verify's requests take turns in it the same way. A count and a queue of waiters: a row that finds a slot free
 * takes it in its own turn, with no promise of its own (p-limit, used before, made four promises
 * and a queue entry for every row, free slot or not).
 */
export class WriteSlots {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1)
      throw new RangeError(`WriteSlots: size must be a whole number of at least 1, got ${size}`);
    this.#free = size;
  }

  /** Slots free now. */
  get free(): number {
    return this.#free;
  }

  /** Runs `task` in a slot, once one is free, and frees it when the task ends (however it ends). */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free -= 1;
    else await new Promise<void>((handed) => this.#waiting.push(handed));
    try {
      return await task();
    } finally {
      // Handed to the row waiting longest, or counted free.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free += 1;
    }
  }
}
