/**
 * One account's rate budget shared by every process that writes to it (issue 42): the slots of
 * each rate-limit window are numbered, and a process claims a few at a time (a lease) from a store
 * every process reaches (the PostgreSQL state store). Each process sends slot k at the time the
 * governor's pacing line gives slot k, so that together they follow one line and stay within the
 * window's quota. A process that dies loses at most its lease; the next window starts afresh.
 */

/** A claim of slots in one window. */
export interface SlotClaim {
  /** The window's end (its `X-RateLimit-Reset`, in ms since the epoch): the window's name. */
  windowEnd: number;
  /** Requests the window allows, as far as this process knows. */
  quota: number;
  /** The service's `X-RateLimit-Limit` (requests an hour), kept for processes that start later (SharedBudget.current). */
  limitPerHour: number;
  /** Slots wanted (0 only raises the count to `floor`). */
  count: number;
  /**
   * Requests the service has already counted in the window (its quota less `X-RateLimit-Remaining`):
   * slots below this are gone, whoever sent them (a process not sharing the budget, a request sent
   * to learn the window).
   */
  floor: number;
}

/** The slots granted: `first` to `first + count - 1`, numbered from 0 within the window. */
export interface SlotGrant {
  first: number;
  /** 0 when the window's quota is spent. */
  count: number;
  /** The window's quota as the budget knows it: the largest any process has claimed with. */
  quota: number;
}

/** A window another process has claimed in, as the budget keeps it. */
export interface SharedWindow {
  windowEnd: number;
  quota: number;
  limitPerHour: number;
}

/** Where the slots of one account's windows are handed out, each once. */
export interface SharedBudget {
  /** Claims up to `claim.count` slots, atomically with every other process's claims. */
  claim(claim: SlotClaim): Promise<SlotGrant>;
  /**
   * The earliest window not yet ended at `now` (ms since the epoch) that some process claimed in,
   * or null: a process starting then learns the window from it rather than sending a request to learn it.
   */
  current(now: number): Promise<SharedWindow | null>;
  /** Gives back the connection(s); the slots already claimed stay claimed. */
  close(): Promise<void>;
}
