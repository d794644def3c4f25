/** What the client had sent, and what the service's quota said, at one moment of a run. */
export interface UsageSample {
  /** Milliseconds since the recording started. */
  atMs: number;
  /** Requests sent since the recording started. */
  requests: number;
  /** Requests left in the service's window (X-RateLimit-Remaining), when it has said. */
  remaining: number | null;
  /** The window's quota (X-RateLimit-Limit), when it has said. */
  limit: number | null;
}

/** What the recorder reads at each sample: the transport's request count and the governor's view of the quota. */
export interface UsageSource {
  requests(): number;
  quota(): { remaining: number | null; limit: number | null };
}

export interface UsageRecorderOptions {
  /** First interval between samples, in ms; it doubles each time the samples are thinned. @default 250 */
  everyMs?: number;
  /** Samples kept at most: past it every other one goes and the interval doubles. @default 480 */
  maxSamples?: number;
  /** @default Date.now */
  now?: () => number;
}

/**
 * Samples a run's requests and quota over time, for the report's chart. A long run keeps a
 * bounded number of samples: past `maxSamples` every other sample is dropped and the interval
 * doubles, so a twelve-hour run and a one-second run both give a chart of a few hundred points.
 */
export class UsageRecorder {
  #samples: UsageSample[] = [];
  #timer: NodeJS.Timeout | null = null;
  #everyMs: number;
  readonly #maxSamples: number;
  readonly #now: () => number;
  #startedAt = 0;
  #requestsAtStart = 0;

  constructor(
    private readonly source: UsageSource,
    options: UsageRecorderOptions = {},
  ) {
    this.#everyMs = options.everyMs ?? 250;
    this.#maxSamples = Math.max(4, options.maxSamples ?? 480);
    this.#now = options.now ?? Date.now;
  }

  /** Takes the first sample; with `timer`, samples on its own until stop(). */
  start(timer = true): this {
    this.#startedAt = this.#now();
    this.#requestsAtStart = this.source.requests();
    this.#samples = [];
    this.sample();
    if (timer) this.#schedule();
    return this;
  }

  #schedule(): void {
    this.#timer = setTimeout(() => {
      this.sample();
      this.#schedule();
    }, this.#everyMs);
    this.#timer.unref();
  }

  /** Takes a sample now. */
  sample(): void {
    const quota = this.source.quota();
    this.#samples.push({
      atMs: this.#now() - this.#startedAt,
      requests: this.source.requests() - this.#requestsAtStart,
      remaining: quota.remaining,
      limit: quota.limit,
    });
    if (this.#samples.length > this.#maxSamples) {
      // Thin out: keep the first, every other one after it, and the newest.
      const last = this.#samples[this.#samples.length - 1] as UsageSample;
      this.#samples = this.#samples.filter((_, i) => i % 2 === 0);
      if (this.#samples[this.#samples.length - 1] !== last) this.#samples.push(last);
      this.#everyMs *= 2;
    }
  }

  /** Takes the last sample and stops sampling. */
  stop(): UsageSample[] {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.sample();
    return this.samples();
  }

  samples(): UsageSample[] {
    return [...this.#samples];
  }

  /** The interval between samples now, in ms (it grows as the samples are thinned). */
  get everyMs(): number {
    return this.#everyMs;
  }
}
