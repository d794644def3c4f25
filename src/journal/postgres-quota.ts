/**
 * One account's rate budget kept in the PostgreSQL state store, shared by every process that
 * writes to the account (issue 42): a row per account and window counts the slots handed out, and
 * a claim takes the next few atomically (`INSERT ... ON CONFLICT DO UPDATE ... RETURNING`), so each
 * slot goes to one process. Old windows' rows are deleted now and then. The shapes claimed and
 * granted are the client's SharedBudget's (src/client/shared-budget.ts), matched by structure:
 * this room is below the client's.
 *
 * The table is the store's (its migrations, postgres-store.ts), and so are the connections.
 */
import { PostgresStore } from './postgres-store.ts';

/** A claim of slots in one window (the client's SlotClaim). */
export interface QuotaClaim {
  windowEnd: number;
  quota: number;
  count: number;
  floor: number;
  limitPerHour: number;
}

/** A window some process claimed in (the client's SharedWindow). */
export interface QuotaWindow {
  windowEnd: number;
  quota: number;
  limitPerHour: number;
}

/** The slots granted (the client's SlotGrant). */
export interface QuotaGrant {
  first: number;
  count: number;
  quota: number;
}

export interface PostgresQuotaOptions {
  /** `postgresql://user@host:port/database`: the state store's address. */
  url: string;
  /** The schema crm-ferry keeps its tables in. @default "crm_ferry" */
  schema?: string;
}

/** How long a claim may take before the run stops with an error rather than wait on. */
const CLAIM_TIMEOUT_MS = 30_000;
/** Rows of windows that ended this long before the one claimed in are deleted. */
const KEEP_WINDOWS_MS = 600_000;

export class PostgresQuota {
  /** The window end up to which old rows were last deleted, per account. */
  private readonly swept = new Map<string, number>();
  private closed = false;

  private constructor(
    private readonly store: PostgresStore,
    private readonly table: string,
  ) {}

  /** Opens the store (made or migrated when it needs it) on two connections of its own. */
  static async open(options: PostgresQuotaOptions): Promise<PostgresQuota> {
    const store = await PostgresStore.open({
      url: options.url,
      ...(options.schema ? { schema: options.schema } : {}),
      connections: 2,
      timeoutMs: CLAIM_TIMEOUT_MS,
    });
    return new PostgresQuota(store, store.table('quota_windows'));
  }

  /**
   * Claims slots of `account`'s window: the count starts at `floor` when that is higher (requests
   * the service counted that no claim did), and a window whose quota is spent grants none. The
   * quota kept is the largest any claim gave.
   */
  async claim(account: string, claim: QuotaClaim): Promise<QuotaGrant> {
    const found = await this.store.query<{ used: number; quota: number }>(
      `INSERT INTO ${this.table} AS w (account, window_end, quota, used, limit_per_hour)
       VALUES ($1, $2, $3, GREATEST($4::integer, 0) + $5::integer, $6)
       ON CONFLICT (account, window_end) DO UPDATE
         SET quota = GREATEST(w.quota, EXCLUDED.quota), used = GREATEST(w.used, $4::integer) + $5::integer,
             limit_per_hour = GREATEST(w.limit_per_hour, EXCLUDED.limit_per_hour)
         WHERE w.used < GREATEST(w.quota, EXCLUDED.quota)
       RETURNING used, quota`,
      [account, claim.windowEnd, claim.quota, claim.floor, claim.count, claim.limitPerHour],
    );
    await this.sweep(account, claim.windowEnd);
    const row = found.rows[0];
    // No row: the window's quota was spent before this claim.
    if (row === undefined) return { first: claim.quota, count: 0, quota: claim.quota };
    const first = row.used - claim.count;
    return { first, count: Math.max(0, Math.min(row.used, row.quota) - first), quota: row.quota };
  }

  /** The account's earliest window not yet ended at `now` that a process claimed in, or null. */
  async current(account: string, now: number): Promise<QuotaWindow | null> {
    const found = await this.store.query<{ window_end: string; quota: number; limit_per_hour: number }>(
      `SELECT window_end, quota, limit_per_hour FROM ${this.table}
        WHERE account = $1 AND window_end > $2 ORDER BY window_end LIMIT 1`,
      [account, now],
    );
    const row = found.rows[0];
    return row ? { windowEnd: Number(row.window_end), quota: row.quota, limitPerHour: row.limit_per_hour } : null;
  }

  /** Deletes the account's rows of long-ended windows, at most once a minute of windows. */
  private async sweep(account: string, windowEnd: number): Promise<void> {
    const last = this.swept.get(account);
    if (last !== undefined && windowEnd - last < 60_000) return;
    this.swept.set(account, windowEnd);
    await this.store.query(`DELETE FROM ${this.table} WHERE account = $1 AND window_end < $2`, [
      account,
      windowEnd - KEEP_WINDOWS_MS,
    ]);
  }

  /** The budget of one account, as the client takes it; its close() closes this store's connections. */
  budgetFor(account: string): {
    claim(claim: QuotaClaim): Promise<QuotaGrant>;
    current(now: number): Promise<QuotaWindow | null>;
    close(): Promise<void>;
  } {
    return {
      claim: (claim) => this.claim(account, claim),
      current: (now) => this.current(account, now),
      close: () => this.close(),
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.store.close();
  }
}
