import type { IANAZone } from 'luxon';
import { luxon } from './luxon-library.ts';

const DAY = 86_400_000;
const MINUTE = 60_000;
/** Bound on cached days per zone; a migration's dates span a few thousand days at most. */
const MAX_CACHED_DAYS = 50_000;

/** A UTC day on which the offset changes: `before` until the instant `at`, `after` from then on. */
interface Transition {
  before: number;
  after: number;
  at: number;
}

/**
 * UTC offsets of one IANA zone, cached per UTC day. Asking Intl for an offset costs microseconds
 * and a timestamp needs several; a day has one offset from start to end, or one change, found
 * once by bisection to the minute (zones change on whole minutes), so every row on that day is
 * answered from the cache. A day with two changes that cancel out is not detected; no zone has one.
 */
export class ZoneOffsets {
  readonly #zone: IANAZone;
  readonly #days = new Map<number, number | Transition>();

  private constructor(zone: IANAZone) {
    this.#zone = zone;
  }

  static #byName = new Map<string, ZoneOffsets>();

  /** The shared offsets of a zone, or undefined when the name is not an IANA zone. */
  static of(name: string): ZoneOffsets | undefined {
    let offsets = ZoneOffsets.#byName.get(name);
    if (offsets === undefined) {
      if (!luxon().IANAZone.isValidZone(name)) return undefined;
      offsets = new ZoneOffsets(luxon().IANAZone.create(name));
      ZoneOffsets.#byName.set(name, offsets);
    }
    return offsets;
  }

  /** Offset from UTC in minutes at the instant `millis`. */
  offsetAt(millis: number): number {
    const day = Math.floor(millis / DAY);
    let cached = this.#days.get(day);
    if (cached === undefined) {
      cached = this.#describeDay(day * DAY);
      if (this.#days.size >= MAX_CACHED_DAYS) this.#days.clear();
      this.#days.set(day, cached);
    }
    if (typeof cached === 'number') return cached;
    return millis < cached.at ? cached.before : cached.after;
  }

  #describeDay(start: number): number | Transition {
    const before = this.#zone.offset(start);
    const after = this.#zone.offset(start + DAY - 1);
    if (before === after) return before;
    // Invariant: the offset is `before` at minute `low` and differs at minute `high`.
    let low = 0;
    let high = DAY / MINUTE;
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (this.#zone.offset(start + middle * MINUTE) === before) low = middle;
      else high = middle;
    }
    return { before, after, at: start + high * MINUTE };
  }

  /**
   * The instant a wall-clock time (given as if it were UTC) stands for in this zone. A time that
   * occurs twice when clocks go back is the first one (RFC 5545, Temporal's "compatible"); a time
   * skipped when clocks go forward moves forward by the gap, as luxon and most calendars do.
   */
  wallToUtc(wall: number): number {
    // The offsets a day either side are the ones on both sides of any transition near this time.
    const before = this.offsetAt(wall - DAY);
    const after = this.offsetAt(wall + DAY);
    const first = wall - before * MINUTE;
    if (this.offsetAt(first) === before) return first;
    const second = wall - after * MINUTE;
    if (before !== after && this.offsetAt(second) === after) return second;
    // In the gap neither offset fits; read with the earlier offset, the clock lands after the gap.
    return first;
  }
}
