import { matchValues, type MatchValue } from './matching.ts';
import {
  matchCriteria,
  type MappedItem,
  type MappedRecord,
  type MatchSpec,
  type NameUse,
  type OnDuplicate,
  type RefUse,
  type RowWarning,
} from '../mapping/index.ts';
import { recordDigest, type ReferenceProblem } from './references.ts';

/**
 * Rows of one input that name one record: the same key, or with `match:` the same match value.
 * `onDuplicate: reject` rejects the later rows as they come (MatchValueCheck and the key checks of
 * the importer and validate); `first` and `merge` need to know a row's duplicates before the row
 * is written, so the input is read once more beforehand (indexDuplicates) and then folded
 * (foldDuplicates). The importer and validate share both, so they report the same rows. Under
 * `separate` rows of one match value are records of their own (rows of one key are still one).
 */

type Body = Record<string, unknown>;

/**
 * The value a record is matched by (lower case) and its criterion (the first of a fallback list
 * the row has a value for), or null when it has none. Custom fields are compared by definition
 * name, as rows hold them before names are resolved.
 */
export function matchValueOf(mapped: MappedRecord, spec: MatchSpec): MatchValue | null {
  for (const by of matchCriteria(spec)) {
    const value =
      by === 'custom'
        ? customValueOf(mapped, spec.definition)
        : (matchValues(mapped.entity, by, mapped.record, undefined)[0] ?? null);
    if (value !== null) return { by, value };
  }
  return null;
}

function customValueOf(mapped: MappedRecord, definition: string | undefined): string | null {
  const fields = Array.isArray(mapped.record.fields) ? (mapped.record.fields as Body[]) : [];
  const field = fields.find((f) => (f.definition as { name?: string } | null)?.name === definition);
  const value =
    field === undefined || field.value === undefined || field.value === null
      ? ''
      : String(field.value).trim().replace(/\s+/g, ' ').toLowerCase();
  return value === '' ? null : value;
}

/** The problem of a row whose match value an earlier row has (`onDuplicate: reject`). */
function sameMatchProblem(match: MatchValue, firstKey: string): ReferenceProblem {
  return {
    field: 'match',
    code: 'MAPPING_VALUE',
    message: `the row with key '${firstKey}' has the same ${match.by} (${match.value}): two rows of the input for one record; merge them (onDuplicate: merge) or give them different values (rows of different records: onDuplicate: separate)`,
  };
}

/** Rejects the second row with a match value, in the order rows are read (onDuplicate: reject); under `separate` rows of one value are different records. */
export class MatchValueCheck {
  readonly #first = new Map<string, string>();
  readonly #spec: MatchSpec | undefined;

  constructor(spec: MatchSpec | undefined, policy: OnDuplicate) {
    this.#spec = policy === 'separate' ? undefined : spec;
  }

  check(mapped: MappedRecord): ReferenceProblem | undefined {
    if (this.#spec === undefined) return undefined;
    const match = matchValueOf(mapped, this.#spec);
    if (match === null) return undefined;
    const key = `${match.by}\u0000${match.value}`;
    const first = this.#first.get(key);
    if (first !== undefined && first !== mapped.key) return sameMatchProblem(match, first);
    this.#first.set(key, mapped.key);
    return undefined;
  }
}

interface Follower {
  row: number;
  /** Spreadsheet row, for messages. */
  line: number;
  key: string;
  /** What it shares with the first row. */
  why: string;
  /** It gives the record the same values as the first row: nothing to fold or say. */
  same: boolean;
}

/** Which rows of an input repeat an earlier row's record, found by reading it once beforehand. */
export interface DuplicateIndex {
  /** Row number of a later row -> row number of the first row of its record. */
  leaderOf: Map<number, number>;
  /** Row number of a first row -> its later rows, in order. */
  followers: Map<number, Follower[]>;
}

/** Reads mapped rows and groups those naming one record (same key, else same match value). Rejected and skipped rows take no part. */
export async function indexDuplicates(
  items: AsyncIterable<MappedItem>,
  spec: MatchSpec | undefined,
): Promise<DuplicateIndex> {
  const byKey = new Map<string, { row: number; digest: number }>();
  const byMatch = new Map<string, { row: number; digest: number }>();
  const index: DuplicateIndex = { leaderOf: new Map(), followers: new Map() };
  for await (const item of items) {
    if (item.kind !== 'record') continue;
    const digest = recordDigest(item);
    const match = spec === undefined ? null : matchValueOf(item, spec);
    const value = match === null ? null : `${match.by}\u0000${match.value}`;
    let leader = byKey.get(item.key);
    let why = 'key';
    if (leader === undefined && match !== null && value !== null) {
      leader = byMatch.get(value);
      why = `${match.by} (${match.value})`;
    }
    if (leader === undefined) {
      const first = { row: item.row, digest };
      byKey.set(item.key, first);
      if (value !== null && !byMatch.has(value)) byMatch.set(value, first);
      continue;
    }
    index.leaderOf.set(item.row, leader.row);
    let list = index.followers.get(leader.row);
    if (!list) index.followers.set(leader.row, (list = []));
    list.push({ row: item.row, line: item.location.row, key: item.key, why, same: digest === leader.digest });
  }
  return index;
}

const LIST_KEYS = new Set(['emailAddresses', 'phoneNumbers', 'websites', 'addresses', 'tags', 'fields', 'tracks']);

/** Items are the same without regard to case: `ADA@x.example` is the address the first row has. */
function sameItem(a: unknown, b: unknown): boolean {
  return JSON.stringify(a).toLowerCase() === JSON.stringify(b).toLowerCase();
}

/** Names and links of `from` under `key` (at `index` in a list, when given), moved to their place in the merged record. */
function carried<T extends NameUse | RefUse>(uses: readonly T[], key: string, index?: number, to?: number): T[] {
  return uses
    .filter((use) => use.path[0] === key && (index === undefined || use.path[1] === index))
    .map((use) => ({ ...use, path: index === undefined ? [...use.path] : [key, to as number, ...use.path.slice(2)] }));
}

/**
 * Folds a later row into the first row of its record: values the first row leaves empty are
 * taken, and list items (emails, phones, addresses, websites, tags, custom fields of other
 * definitions, tracks) it lacks are added. Returns what was taken, for the warning.
 */
export function mergeRecord(into: MappedRecord, from: MappedRecord): string[] {
  const taken: string[] = [];
  for (const [key, value] of Object.entries(from.record)) {
    const current = into.record[key];
    if (LIST_KEYS.has(key) && Array.isArray(value)) {
      const list = Array.isArray(current) ? (current as unknown[]) : [];
      let added = 0;
      value.forEach((item, index) => {
        const exists =
          key === 'fields'
            ? list.some((f) => sameItem((f as Body).definition, (item as Body).definition))
            : key === 'tags'
              ? list.some((t) => String((t as Body).name).toLowerCase() === String((item as Body).name).toLowerCase())
              : list.some((t) => sameItem(t, item));
        if (exists) return;
        const at = list.push(key === 'fields' || key === 'tracks' ? { ...(item as Body) } : item) - 1;
        into.names.push(...carried(from.names, key, index, at));
        added += 1;
      });
      if (added > 0) {
        into.record[key] = list;
        taken.push(`${added} ${key}`);
      }
      continue;
    }
    if (current !== undefined) continue;
    into.record[key] = value;
    into.names.push(...carried(from.names, key));
    into.refs.push(...carried(from.refs, key));
    taken.push(key);
  }
  for (const file of from.attachments) {
    if (!into.attachments.includes(file)) {
      into.attachments.push(file);
      taken.push('an attachment');
    }
  }
  if (from.warnings) (into.warnings ??= []).push(...from.warnings);
  return taken;
}

function warn(mapped: MappedRecord, warning: RowWarning): void {
  (mapped.warnings ??= []).push(warning);
}

/**
 * Applies `onDuplicate: first | merge` to mapped rows, given the index read beforehand. A later
 * row becomes a skipped item that says which row it was folded into (counted as repeated); under
 * `first` the first row carries a DUPLICATE_DROPPED warning per later row that differs, under
 * `merge` it waits for its last later row and carries a DUPLICATE_MERGED warning per row merged.
 */
export async function* foldDuplicates(
  items: AsyncIterable<MappedItem>,
  index: DuplicateIndex,
  policy: 'first' | 'merge',
): AsyncGenerator<MappedItem> {
  const held = new Map<number, { leader: MappedRecord; remaining: number }>();
  const keyOf = new Map<number, string>();
  for await (const item of items) {
    if (item.kind !== 'record') {
      yield item;
      continue;
    }
    const followers = index.followers.get(item.row);
    if (followers !== undefined) {
      keyOf.set(item.row, item.key);
      if (policy === 'first') {
        for (const f of followers) {
          if (!f.same)
            warn(item, {
              code: 'DUPLICATE_DROPPED',
              field: 'key',
              message: `row ${f.line} has the same ${f.why} and was left out (onDuplicate: first)`,
              value: f.key,
            });
        }
        yield item;
      } else held.set(item.row, { leader: item, remaining: followers.length });
      continue;
    }
    const leaderRow = index.leaderOf.get(item.row);
    if (leaderRow === undefined) {
      yield item;
      continue;
    }
    const folded: MappedItem = {
      kind: 'skipped',
      row: item.row,
      location: item.location,
      folded: { key: item.key, into: keyOf.get(leaderRow) ?? item.key },
    };
    const state = held.get(leaderRow);
    if (state === undefined) {
      yield folded;
      continue;
    }
    const follower = index.followers.get(leaderRow)?.find((f) => f.row === item.row);
    if (follower && !follower.same) {
      const taken = mergeRecord(state.leader, item);
      warn(state.leader, {
        code: 'DUPLICATE_MERGED',
        field: 'key',
        message: `row ${item.location.row} has the same ${follower.why} and was merged in${taken.length === 0 ? ', adding nothing' : `: ${taken.join(', ')}`}`,
        value: item.key,
      });
    }
    state.remaining -= 1;
    if (state.remaining === 0) {
      held.delete(leaderRow);
      // The first row before its last later row: the later row's key then names a row already met.
      yield state.leader;
    }
    yield folded;
  }
  // Later rows the second reading did not meet (the input changed in between): the first rows go out as they are.
  for (const { leader } of held.values()) yield leader;
}
