import { FerryError } from '../errors/index.ts';
import { ENTITY_PLURAL, type Entity, type MatchSpec, type NameResolver } from '../mapping/index.ts';

type Body = Record<string, unknown>;

/** What a match lookup needs of the account: its records by filter (load's RecordService is one). */
export interface RecordFinder {
  filter(entity: 'party' | 'kase' | 'opportunity', conditions: unknown[]): AsyncIterable<Body>;
}

/** How many values one filter query asks for at most. */
const BATCH = 50;
/** How long a lookup waits for others to share its query, in milliseconds. */
const GATHER_MS = 15;

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim().replace(/\s+/g, ' ').toLowerCase() : value === undefined || value === null ? '' : String(value).toLowerCase();
}

function definitionIdOf(definition: unknown): number | undefined {
  if (typeof definition === 'number') return definition;
  if (definition !== null && typeof definition === 'object' && typeof (definition as Body).id === 'number') return (definition as Body).id as number;
  return undefined;
}

/**
 * The values a record can be matched by under `spec`: what a row's body holds, or what a record
 * in the account holds (a party may have several e-mail addresses: any of them matches).
 * Compared without regard to case or repeated spaces.
 */
export function matchValues(entity: Entity, spec: MatchSpec, record: Body, definitionId: number | undefined): string[] {
  switch (spec.by) {
    case 'email': {
      const list = Array.isArray(record.emailAddresses) ? (record.emailAddresses as Body[]) : [];
      return list.map((e) => text(e.address)).filter((v) => v !== '');
    }
    case 'name': {
      const name = entity === 'party' && record.type !== 'organisation' && record.name === undefined ? `${text(record.firstName)} ${text(record.lastName)}`.trim() : text(record.name);
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

/** The filter field a match compares, as the service names it. */
function filterField(spec: MatchSpec, definitionId: number | undefined): string {
  return spec.by === 'custom' ? `custom:${definitionId}` : spec.by;
}

interface Waiting {
  value: string;
  resolve(records: Body[]): void;
  reject(error: unknown): void;
}

/**
 * Finds the account's records for rows' match values, many rows to one filter query (an
 * `orGroup` of up to 50 values), and remembers every answer for the run: a lookup costs a
 * fraction of a request, not one search per row.
 */
export class Matcher {
  readonly #cache = new Map<string, Promise<Body[]>>();
  #waiting: Waiting[] = [];
  #timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly service: RecordFinder,
    private readonly entity: 'party' | 'kase' | 'opportunity',
    private readonly spec: MatchSpec,
    /** The custom field's id, with `by: custom`. */
    private readonly definitionId: number | undefined,
  ) {}

  /** How many values were looked up: the most queries the lookups can take, one a value. */
  get values(): number {
    return this.#cache.size;
  }

  /** The value of a row's body that is looked up, or null when it has none. */
  valueOf(body: Body): string | null {
    return matchValues(this.entity, this.spec, body, this.definitionId)[0] ?? null;
  }

  /** The account's records that match `value` (already lower-cased by valueOf). */
  find(value: string): Promise<Body[]> {
    const cached = this.#cache.get(value);
    if (cached) return cached;
    const promise = new Promise<Body[]>((resolve, reject) => {
      this.#waiting.push({ value, resolve, reject });
      if (this.#waiting.length >= BATCH) this.#flush();
      else this.#timer ??= setTimeout(() => this.#flush(), GATHER_MS);
    });
    this.#cache.set(value, promise);
    return promise;
  }

  #flush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const batch = this.#waiting;
    this.#waiting = [];
    if (batch.length === 0) return;
    void this.#query(batch);
  }

  async #query(batch: Waiting[]): Promise<void> {
    const field = filterField(this.spec, this.definitionId);
    const found = new Map<string, Body[]>(batch.map((w) => [w.value, []]));
    try {
      const conditions = [{ orGroup: batch.map((w) => ({ field, operator: 'is', value: w.value })) }];
      for await (const record of this.service.filter(this.entity, conditions)) {
        for (const value of new Set(matchValues(this.entity, this.spec, record, this.definitionId))) found.get(value)?.push(record);
      }
      for (const w of batch) w.resolve(found.get(w.value) ?? []);
    } catch (error) {
      for (const w of batch) {
        this.#cache.delete(w.value);
        w.reject(error);
      }
    }
  }
}

/**
 * The matcher of a mapping that says `match:` (null without one, or for entries and tasks). A
 * custom field to match by must exist in the account (MAPPING_UNKNOWN_NAME naming the mapping);
 * an offline resolver knows none and is let through. The importer and `validate --online` share it.
 */
export function createMatcher(service: RecordFinder, entity: Entity, spec: MatchSpec | undefined, resolver: NameResolver & { online?: boolean }, mappingFile: string): Matcher | null {
  if (!spec || (entity !== 'party' && entity !== 'kase' && entity !== 'opportunity')) return null;
  let definitionId: number | undefined;
  if (spec.by === 'custom') {
    definitionId = resolver.resolve('fieldDefinition', spec.definition ?? '', { entity: ENTITY_PLURAL[entity], tag: null });
    if (definitionId === undefined && resolver.online !== false) {
      throw new FerryError('MAPPING_UNKNOWN_NAME', `match.definition: the account has no custom field \`${spec.definition}\` for ${ENTITY_PLURAL[entity]}`, {
        location: { file: mappingFile, yamlPath: 'match.definition' },
      });
    }
  }
  return new Matcher(service, entity, spec, definitionId);
}

/** What the account's records found for a new row's match value mean: the record to adopt, none, or a reason to reject the row. */
export type MatchOutcome = { kind: 'none' } | { kind: 'found'; record: Record<string, unknown> } | { kind: 'conflict'; message: string; status?: number };

/**
 * Judges a lookup's answer the way the importer acts on it: several records are a conflict (the
 * row cannot tell which), one record under `onMatch: reject` is one too. `taken`: records already
 * written or matched for other rows, never matched again.
 */
export function judgeMatch(spec: MatchSpec, value: string, found: Array<Record<string, unknown>>, taken: ReadonlySet<number>): MatchOutcome {
  const records = found.filter((r) => typeof r.id === 'number' && !taken.has(r.id as number));
  if (records.length > 1) {
    return { kind: 'conflict', message: `${records.length} records in the account have ${spec.by} ${value} (ids ${records.map((r) => r.id).join(', ')}): the row cannot tell which one it is` };
  }
  const [record] = records;
  if (record === undefined) return { kind: 'none' };
  if (spec.onMatch === 'reject') return { kind: 'conflict', message: `the account has this record already (id ${record.id as number}, same ${spec.by}); the mapping says onMatch: reject`, status: 409 };
  return { kind: 'found', record };
}
