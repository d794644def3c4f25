import { FerryError } from '../errors/index.ts';
import {
  ENTITY_PLURAL,
  type Entity,
  matchCriteria,
  type MatchCriterion,
  type MatchSpec,
  type NameResolver,
  type OnDuplicate,
} from '../mapping/index.ts';

type Body = Record<string, unknown>;

/** What a match lookup needs of the account: its records by filter, or all of them (the client's RecordService is one). */
export interface RecordFinder {
  filter(entity: 'party' | 'kase' | 'opportunity', conditions: unknown[]): AsyncIterable<Body>;
  /** Every record of a kind, or null when the account holds more than `upTo`. */
  list?(entity: 'party' | 'kase' | 'opportunity', upTo: number): Promise<Body[] | null>;
}

/** How many values one filter query asks for at most. */
export const MATCH_BATCH = 50;
/** How long a lookup waits for others to share its query, in milliseconds. */
const GATHER_MS = 15;

/** How a matcher times its queries. */
export interface MatcherOptions {
  /**
   * Whether more values are coming before the writes need the ones waiting: while it says so,
   * values short of a full query wait for more rather than going after the 15 ms gather, and are
   * looked at again after the next gather (`release()`, and each answer). Without it a query goes
   * 15 ms after its first value.
   * @default () => false
   */
  busy?: () => boolean;
  /**
   * Read the account's whole list of the records (100 a request) before the first look-up, and
   * answer every look-up from it, when it holds at most this many; past that many, the look-ups go
   * by filter queries after all. Worth it when the account is not much larger than the input: a
   * filter query answers 50 values, a page of the list holds 100 records.
   * @default 0 (filter queries only)
   */
  listUpTo?: number;
}

function text(value: unknown): string {
  return typeof value === 'string'
    ? value.trim().replace(/\s+/g, ' ').toLowerCase()
    : value === undefined || value === null
      ? ''
      : String(value).toLowerCase();
}

function definitionIdOf(definition: unknown): number | undefined {
  if (typeof definition === 'number') return definition;
  if (definition !== null && typeof definition === 'object' && typeof (definition as Body).id === 'number')
    return (definition as Body).id as number;
  return undefined;
}

/**
 * The values a record can be matched by under one criterion: what a row's body holds, or what a
 * record in the account holds (a party may have several e-mail addresses: any of them matches).
 * Compared without regard to case or repeated spaces.
 */
export function matchValues(
  entity: Entity,
  by: MatchCriterion,
  record: Body,
  definitionId: number | undefined,
): string[] {
  switch (by) {
    case 'email': {
      const list = Array.isArray(record.emailAddresses) ? (record.emailAddresses as Body[]) : [];
      return list.map((e) => text(e.address)).filter((v) => v !== '');
    }
    case 'name': {
      const name =
        entity === 'party' && record.type !== 'organisation' && record.name === undefined
          ? `${text(record.firstName)} ${text(record.lastName)}`.trim()
          : text(record.name);
      return name === '' ? [] : [name];
    }
    case 'custom': {
      const fields = Array.isArray(record.fields) ? (record.fields as Body[]) : [];
      const field = fields.find((f) => definitionId !== undefined && definitionIdOf(f.definition) === definitionId);
      const value = field === undefined ? '' : text(field.value);
      return value === '' ? [] : [value];
    }
  }
}

/** A row's match value: the criterion it is looked up by (the first of a fallback list the row has a value for) and the value. */
export interface MatchValue {
  by: MatchCriterion;
  value: string;
}

/** The filter field a match compares, as the service names it. */
function filterField(by: MatchCriterion, definitionId: number | undefined): string {
  return by === 'custom' ? `custom:${definitionId}` : by;
}

interface Waiting {
  value: string;
  /** The cache's key: criterion and value. */
  key: string;
  resolve(records: Body[]): void;
  reject(error: unknown): void;
}

/**
 * Finds the account's records for rows' match values, many rows to one filter query (an
 * `orGroup` of up to 50 values of one criterion), and remembers every answer for the run: a
 * lookup costs a fraction of a request, not one search per row. The importer asks for the values
 * of the rows it has read ahead of its writes and holds them (`busy`) until 50 wait or no more can
 * come in time, so that a run held back by the rate limit, whose rows come in one at a time as
 * writes end, still shares its queries.
 */
export class Matcher {
  readonly #cache = new Map<string, Promise<Body[]>>();
  readonly #waiting = new Map<MatchCriterion, Waiting[]>();
  #timer: NodeJS.Timeout | null = null;
  #querying = 0;
  readonly #criteria: MatchCriterion[];
  readonly #busy: () => boolean;
  readonly #listUpTo: number;
  /** The account's records by criterion and value, once its list is read; null when it was too long (or not to be read). */
  #listed: Promise<Map<string, Body[]> | null> | null = null;

  constructor(
    private readonly service: RecordFinder,
    private readonly entity: 'party' | 'kase' | 'opportunity',
    spec: MatchSpec,
    /** The custom field's id, with `by: custom`. */
    private readonly definitionId: number | undefined,
    options: MatcherOptions = {},
  ) {
    this.#criteria = matchCriteria(spec);
    this.#busy = options.busy ?? (() => false);
    this.#listUpTo = service.list ? (options.listUpTo ?? 0) : 0;
  }

  /** The account's records indexed by `criterion\0value`, or null when the list holds more than `listUpTo`. */
  async #readList(): Promise<Map<string, Body[]> | null> {
    const index = new Map<string, Body[]>();
    const records = await (this.service.list as NonNullable<RecordFinder['list']>)(this.entity, this.#listUpTo);
    if (records === null) return null;
    for (const record of records) {
      for (const by of this.#criteria) {
        for (const value of new Set(matchValues(this.entity, by, record, this.definitionId))) {
          const key = `${by}\u0000${value}`;
          const list = index.get(key);
          if (list) list.push(record);
          else index.set(key, [record]);
        }
      }
    }
    return index;
  }

  /** How many values were looked up: the most queries the lookups can take, one a value. */
  get values(): number {
    return this.#cache.size;
  }

  /** What a row's body is looked up by, or null when it has a value for no criterion. */
  valueOf(body: Body): MatchValue | null {
    for (const by of this.#criteria) {
      const value = matchValues(this.entity, by, body, this.definitionId)[0];
      if (value !== undefined) return { by, value };
    }
    return null;
  }

  /** The account's records that match a row's value (as valueOf gives it). */
  find(match: MatchValue): Promise<Body[]> {
    const key = `${match.by}\u0000${match.value}`;
    const cached = this.#cache.get(key);
    if (cached) return cached;
    let promise: Promise<Body[]>;
    if (this.#listUpTo > 0) {
      this.#listed ??= this.#readList();
      // Too long a list: the look-ups go by filter queries after all.
      promise = this.#listed.then((index) => (index ? (index.get(key) ?? []) : this.#queued(match, key)));
      // A failed read of the list fails the look-ups waiting for it; the next ones ask again.
      promise.catch(() => {
        this.#cache.delete(key);
        this.#listed = null;
      });
    } else promise = this.#queued(match, key);
    this.#cache.set(key, promise);
    return promise;
  }

  /** The look-up, waiting to share a filter query with others. */
  #queued(match: MatchValue, key: string): Promise<Body[]> {
    return new Promise<Body[]>((resolve, reject) => {
      let list = this.#waiting.get(match.by);
      if (!list) this.#waiting.set(match.by, (list = []));
      list.push({ value: match.value, key, resolve, reject });
      if (list.length >= MATCH_BATCH) this.#flush(match.by);
      else this.#timer ??= setTimeout(() => this.#gathered(), GATHER_MS);
    });
  }

  /** The gather is over: the values go now, unless the writes have rows enough to go on with. */
  #gathered(): void {
    this.#timer = null;
    if (!this.#busy()) this.#flushAll();
  }

  /**
   * Looks again, after a gather, whether values held back may go: called as writes end and as the
   * reader stops, so that a row's answer is asked for before the writes run out of rows that have
   * theirs. The gather lets what was under way settle first (rows answered, the reader reading on).
   */
  release(): void {
    if (this.#waiting.size > 0) this.#timer ??= setTimeout(() => this.#gathered(), GATHER_MS);
  }

  /** Whether a query is under way: its answers will let more rows on, whose values may fill a query. */
  get querying(): boolean {
    return this.#querying > 0;
  }

  #flushAll(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    for (const by of [...this.#waiting.keys()]) this.#flush(by);
  }

  #flush(by: MatchCriterion): void {
    const batch = this.#waiting.get(by) ?? [];
    this.#waiting.delete(by);
    if (this.#waiting.size === 0 && this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    if (batch.length === 0) return;
    void this.#query(by, batch);
  }

  async #query(by: MatchCriterion, batch: Waiting[]): Promise<void> {
    const field = filterField(by, this.definitionId);
    const found = new Map<string, Body[]>(batch.map((w) => [w.value, []]));
    this.#querying += 1;
    try {
      const conditions = [{ orGroup: batch.map((w) => ({ field, operator: 'is', value: w.value })) }];
      for await (const record of this.service.filter(this.entity, conditions)) {
        for (const value of new Set(matchValues(this.entity, by, record, this.definitionId)))
          found.get(value)?.push(record);
      }
      for (const w of batch) w.resolve(found.get(w.value) ?? []);
    } catch (error) {
      for (const w of batch) {
        this.#cache.delete(w.key);
        w.reject(error);
      }
    } finally {
      this.#querying -= 1;
      this.release();
    }
  }
}

/**
 * The matcher of a mapping that says `match:` (null without one, or for entries and tasks). A
 * custom field to match by must exist in the account (MAPPING_UNKNOWN_NAME naming the mapping);
 * an offline resolver knows none and is let through. The importer and `validate --online` share it.
 */
export function createMatcher(
  service: RecordFinder,
  entity: Entity,
  spec: MatchSpec | undefined,
  resolver: NameResolver & { online?: boolean },
  mappingFile: string,
  options: MatcherOptions = {},
): Matcher | null {
  if (!spec || (entity !== 'party' && entity !== 'kase' && entity !== 'opportunity')) return null;
  let definitionId: number | undefined;
  if (matchCriteria(spec).includes('custom')) {
    definitionId = resolver.resolve('fieldDefinition', spec.definition ?? '', {
      entity: ENTITY_PLURAL[entity],
      tag: null,
    });
    if (definitionId === undefined && resolver.online !== false) {
      throw new FerryError(
        'MAPPING_UNKNOWN_NAME',
        `match.definition: the account has no custom field \`${spec.definition}\` for ${ENTITY_PLURAL[entity]}`,
        {
          location: { file: mappingFile, yamlPath: 'match.definition' },
        },
      );
    }
  }
  return new Matcher(service, entity, spec, definitionId, options);
}

/** What the account's records found for a new row's match value mean: the record to adopt, none, or a reason to reject the row. */
export type MatchOutcome =
  | { kind: 'none' }
  | { kind: 'found'; record: Record<string, unknown> }
  | { kind: 'conflict'; message: string; status?: number };

/**
 * Judges a lookup's answer the way the importer acts on it: several records are a conflict (the
 * row cannot tell which) unless the mapping says `onDuplicate: separate`, where the row takes the
 * lowest id; one record under `onMatch: reject` is a conflict too. `taken`: records already
 * written or matched for other rows, never matched again. `row`: the row's body, its links
 * written, for `within`.
 */
export function judgeMatch(
  spec: MatchSpec,
  match: MatchValue,
  found: Array<Record<string, unknown>>,
  taken: { has(id: number): boolean },
  policy: OnDuplicate = 'reject',
  row?: Body,
): MatchOutcome {
  const within = spec.within;
  const linkOf = (record: Body): number | null => {
    const link = within === undefined ? undefined : record[within];
    return link !== null && typeof link === 'object' && typeof (link as Body).id === 'number'
      ? ((link as Body).id as number)
      : null;
  };
  // Without the row's body (validate, before links are written) the link cannot be compared.
  const sameLink = (record: Body): boolean =>
    within === undefined || row === undefined || linkOf(record) === linkOf(row);
  const records = found
    .filter((r) => typeof r.id === 'number' && !taken.has(r.id as number) && sameLink(r))
    .sort((x, y) => (x.id as number) - (y.id as number));
  if (records.length > 1 && policy !== 'separate') {
    return {
      kind: 'conflict',
      message: `${records.length} records in the account have ${match.by} ${match.value} (ids ${records.map((r) => r.id).join(', ')}): the row cannot tell which one it is`,
    };
  }
  const [record] = records;
  if (record === undefined) return { kind: 'none' };
  if (spec.onMatch === 'reject')
    return {
      kind: 'conflict',
      message: `the account has this record already (id ${record.id as number}, same ${match.by}); the mapping says onMatch: reject`,
      status: 409,
    };
  return { kind: 'found', record };
}
