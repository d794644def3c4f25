import { mkdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import pLimit from 'p-limit';
import { z } from 'zod';
import type { CrmClient, V1LiveConnection } from '../client/index.ts';
import { FerryError } from '../errors/index.ts';
import { type AccountIdentity, loadJournal, type LoadedJournal, readJournal, type RowState, StateDir } from '../journal/index.ts';
import { assertSameKey, fromRecord, planUpdate, readNames, RecordService } from '../load/index.ts';
import { type CompiledMapping, csvField, type Entity, type MappedRecord, type NameResolver, resolveRecord, setAt } from '../mapping/index.ts';
import { lookUpRef, openStepItems, type PreparedStep, prepareRun } from '../plan/index.ts';
import { writeFileAtomic } from '../util/index.ts';

type Body = Record<string, unknown>;

export const verifyOptionsSchema = z.object({
  /** One mapping over one input, or a whole plan: what the run was made with. */
  source: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('mapping'), mappingFile: z.string().min(1), inputFile: z.string().min(1) }),
    z.object({ kind: z.literal('plan'), planFile: z.string().min(1) }),
  ]),
  /** The state folder of the runs to check. */
  stateDir: z.string().min(1),
  /** Where the CSV of the differences goes. @default `<stateDir>/results/verify.differences.csv` */
  differencesFile: z.string().min(1).nullable().default(null),
  /** Requests under way at once. @default 8 */
  concurrency: z.number().int().min(1).max(64).default(8),
});

export type VerifyOptions = z.output<typeof verifyOptionsSchema>;
export type VerifyOptionsInput = z.input<typeof verifyOptionsSchema>;

/** Records read per filter query: one page. */
export const VERIFY_BATCH = 100;

/** Kinds the structured filter can fetch by id, a page at a time; the others are read one GET each. */
const FILTERABLE: ReadonlySet<Entity> = new Set(['party', 'kase', 'opportunity']);

/**
 * What differs between a row and the account:
 * - `missing`: the row has no record in the account (never written, rejected, or deleted there);
 * - `extra`: a record a run created whose row the source no longer has, or a party, project or
 *   opportunity created in the account since the first run that no run wrote (added by hand);
 * - `differs`: a field the account holds otherwise than the row maps to;
 * - `unresolved`: a link (or a name) of the row that did not resolve.
 */
export type DifferenceKind = 'missing' | 'extra' | 'differs' | 'unresolved';

export interface VerifyDifference {
  step: string;
  kind: DifferenceKind;
  /** The row as a spreadsheet numbers it; null for an extra record (its row is gone). */
  row: number | null;
  key: string;
  /** The target (`email`, `fields`), the link's mapping place, or '' for the whole record. */
  field: string;
  /** What the row maps to, as text ('' when it has nothing there). */
  inFile: string;
  /** What the account holds, or why there is nothing. */
  inAccount: string;
  /** The record's id in the account, when it has one. */
  id: number | null;
}

export interface VerifyStepSummary {
  step: string;
  entity: Entity;
  inputFile: string;
  mappingFile: string;
  /** Rows read from the source (skipped ones included). */
  rows: number;
  /** Rows the mapping's `skip` left out: not expected in the account. */
  skipped: number;
  /** Rows whose record the account has. */
  found: number;
  missing: number;
  extra: number;
  /** Rows whose record differs in at least one field. */
  differing: number;
  /** Rows with a link or name that did not resolve. */
  unresolved: number;
  /** Records the account had before and the mapping said to leave alone (`onMatch: skip`): found, not compared. */
  notCompared: number;
}

export interface VerifySummary {
  stateDir: string;
  steps: VerifyStepSummary[];
  /** Every difference, in step order, then row order; records added in the account last. */
  differences: VerifyDifference[];
  differencesFile: string;
  /** Requests sent, reads of names included. */
  requests: number;
  /** Of those, the reads of the account's names at the start. */
  requestsForNames: number;
  /** Of those, the listing of records created in the account since the first run. */
  requestsForAdded: number;
  /** The requests announced before the records were read by id (the `plan` event). */
  plannedRequests: number;
  /**
   * Notes and tasks whose list was read only up to its cap (listingCap) when looking for ones added
   * by hand, with how many were looked at: beyond them, one added by hand is not seen.
   */
  notListed: Array<{ entity: 'entry' | 'task'; listed: number }>;
  elapsedMs: number;
  /** True when nothing differs. */
  matches: boolean;
}

export type VerifyEvent =
  /** Sent before the records are read: how many requests that takes. */
  | {
      type: 'plan';
      /** Per step: the records the journal holds ids for, and the requests reading them takes. */
      steps: Array<{ step: string; records: number; requests: number }>;
      /** The requests still to come: reading the records by id. */
      requests: number;
      /** Spent already: reading the account's names. */
      requestsForNames: number;
      /** Spent already: listing the records created in the account since the first run. */
      requestsForAdded: number;
    }
  | { type: 'end'; summary: VerifySummary };

export interface VerifyDeps {
  client: CrmClient;
  /** The account the state must belong to. */
  account: AccountIdentity;
  signal?: AbortSignal;
  onEvent?: (event: VerifyEvent) => void;
  /** Names of the account; read once from the account when absent. */
  resolver?: NameResolver;
  /** How live v1 inputs (`v1+https://HOST`) are reached; a step with one is refused without it. */
  v1Live?: V1LiveConnection;
}

/** The requests that reading `count` records of `entity` takes. */
export function requestsToRead(entity: Entity, count: number): number {
  return FILTERABLE.has(entity) ? Math.ceil(count / VERIFY_BATCH) : count;
}

/** A value as the differences file shows it: text as it is, the rest as JSON. */
function shown(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Items of the account's list without their ids: what the row's items are compared with. */
function withoutIds(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  return value.map((item) => {
    if (item === null || typeof item !== 'object') return item;
    const { id: _id, ...rest } = item as Body;
    return rest;
  });
}

function valueAt(record: Body, path: ReadonlyArray<string | number>): unknown {
  let node: unknown = record;
  for (const part of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[part];
  }
  return node;
}

/** The ids a journal holds for its rows, by key: what the account should have. */
function idsOf(journal: LoadedJournal): Map<string, RowState & { id: number }> {
  const ids = new Map<string, RowState & { id: number }>();
  for (const row of journal.rows.values()) if (row.id !== null) ids.set(row.key, row as RowState & { id: number });
  return ids;
}

interface StepCheck {
  prepared: PreparedStep;
  entity: Entity;
  journal: LoadedJournal;
  ids: Map<string, RowState & { id: number }>;
  /** The account's records by id, once read; an id absent here is not in the account. */
  records: Map<number, Body>;
  /** When the step's first run began (its journal's first line), or null for a step never run. */
  began: Date | null;
  /** The party types (person, organisation) the step's rows map to: where a record added by hand belongs. */
  types: Set<string>;
}

/** When a journal's first run began: its first line's time. */
async function firstRunTime(file: string): Promise<Date | null> {
  for await (const entry of readJournal(file)) {
    const at = Date.parse(entry.at);
    return Number.isNaN(at) ? null : new Date(at);
  }
  return null;
}

/**
 * How many of the account's notes or tasks are listed when looking for ones added by hand: the
 * interface lists neither by \`since\`, so the whole list is read, 100 a request, but never more
 * than a request for every 100 the runs wrote and one more; reading those records by id costs a
 * request each already, so the look costs at most a hundredth more.
 */
export function listingCap(written: number): number {
  return (Math.ceil(written / VERIFY_BATCH) + 1) * VERIFY_BATCH;
}

/**
 * Whether a record of the account can have been added by a person (or another program) rather
 * than by the service itself: an e-mail entry arrives by mail, a `task` entry is the record of a
 * completed task, and a task with `hasTrack` came with a track applied to its record.
 */
function ownedByPeople(entity: Entity, record: Body): boolean {
  if (entity === 'entry') return record.type === 'note';
  if (entity === 'task') return record.hasTrack !== true;
  return true;
}

/** What readAdded found: records added by hand per kind, and the kinds whose list was cut at the cap. */
interface Added {
  records: Map<Entity, Body[]>;
  /** Notes or tasks listed up to the cap with more perhaps beyond: the number looked at. */
  cut: Map<'entry' | 'task', number>;
}

/**
 * Records of the kinds the steps write that the account created since the first run began and
 * that no run wrote: added by hand, or by something else, while the migration was under way or
 * after it. Parties, projects and opportunities are read with \`since\`, 100 a request; notes and
 * tasks by listing them all, up to listingCap (see ownedByPeople for those the service makes).
 */
async function readAdded(service: RecordService, checks: readonly StepCheck[]): Promise<Added> {
  const added: Added = { records: new Map(), cut: new Map() };
  for (const entity of ['party', 'kase', 'opportunity', 'entry', 'task'] as const) {
    const mine = checks.filter((check) => check.entity === entity);
    const began = mine.map((check) => check.began?.getTime() ?? Number.POSITIVE_INFINITY).reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
    if (mine.length === 0 || !Number.isFinite(began)) continue;
    const known = new Set(mine.flatMap((check) => [...check.ids.values()].map((row) => row.id)));
    const found: Body[] = [];
    const listed = entity === 'entry' || entity === 'task';
    const cap = listingCap(known.size);
    let seen = 0;
    for await (const record of listed ? service.listAll(entity) : service.changedSince(entity, new Date(began))) {
      seen += 1;
      if (typeof record.id === 'number' && !known.has(record.id) && ownedByPeople(entity, record)) {
        const created = typeof record.createdAt === 'string' ? Date.parse(record.createdAt) : Number.NaN;
        // Changed since, but there before: an edit of the account's own record is not for verify
        // to judge. Compared in whole seconds, as the service gives its times: a record made in the
        // second the run began is reported rather than passed over.
        if (!Number.isNaN(created) && created >= Math.floor(began / 1000) * 1000) found.push(record);
      }
      if (listed && seen >= cap) {
        added.cut.set(entity, seen);
        break;
      }
    }
    added.records.set(entity, found);
  }
  return added;
}

/**
 * The step a record added by hand is listed under: the step of its kind whose rows have its party
 * type (a person added by hand is no business of a plan that writes only organisations), else,
 * for kinds without a type, the first step of its kind.
 */
function stepFor(record: Body, checks: readonly StepCheck[], entity: Entity): StepCheck | undefined {
  const mine = checks.filter((check) => check.entity === entity);
  if (entity === 'entry' || entity === 'task') {
    // A note or task goes under the step that writes them on the kind of record it is on.
    const on = (['party', 'kase', 'opportunity'] as const).find((kind) => record[kind] !== undefined && record[kind] !== null);
    return mine.find((check) => on !== undefined && check.prepared.mapping.fields.some((field) => field.to === on)) ?? mine[0];
  }
  if (typeof record.type === 'string') return mine.find((check) => check.types.has(record.type as string));
  return mine[0];
}

/** A record's name, as a person would look for it in the account. */
function nameOf(record: Body): string {
  // A note or task by the start of its text.
  const text = typeof record.content === 'string' ? record.content : typeof record.description === 'string' ? record.description : null;
  if (text !== null && text.trim() !== '') {
    const line = text.trim().split('\n')[0] as string;
    return `"${line.length > 60 ? `${line.slice(0, 59)}…` : line}"`;
  }
  const name = typeof record.name === 'string' ? record.name : [record.firstName, record.lastName].filter((part) => typeof part === 'string' && part !== '').join(' ');
  return name === '' ? `record ${String(record.id)}` : name;
}

/** Reads the records of the ids, a filter page of 100 at a time where the entity has a filter, else one GET each. */
async function readRecords(service: RecordService, entity: Entity, ids: number[], limit: ReturnType<typeof pLimit>): Promise<Map<number, Body>> {
  const found = new Map<number, Body>();
  if (FILTERABLE.has(entity)) {
    const batches: number[][] = [];
    for (let i = 0; i < ids.length; i += VERIFY_BATCH) batches.push(ids.slice(i, i + VERIFY_BATCH));
    await Promise.all(
      batches.map((batch) =>
        limit(async () => {
          const conditions = [{ orGroup: batch.map((id) => ({ field: 'id', operator: 'is', value: id })) }];
          for await (const record of service.filter(entity as 'party', conditions)) if (typeof record.id === 'number') found.set(record.id, record);
        }),
      ),
    );
    return found;
  }
  await Promise.all(
    ids.map((id) =>
      limit(async () => {
        const record = await service.read(entity, id);
        if (record !== null) found.set(id, record);
      }),
    ),
  );
  return found;
}

/**
 * Compares the account with the source of a migration: every step's input is read and mapped
 * again, and each row's record (found by the id the journal holds for it) is compared field by
 * field with what the row maps to, the way the importer's `--full` sees it (planUpdate: what the
 * account's record lacks of the row's body). Records a run created whose row has left the input
 * are extra. Nothing is written to the account; the differences go to a CSV file.
 */
export async function runVerify(input: VerifyOptionsInput, deps: VerifyDeps): Promise<VerifySummary> {
  const options = verifyOptionsSchema.parse(input);
  const started = Date.now();
  const requestsAtStart = deps.client.transport.requestsSent;
  const emit = deps.onEvent ?? (() => undefined);
  const { steps: prepared, compiled } = await prepareRun(options.source, { live: { connection: deps.v1Live } });
  const names = await readNames(deps.client, deps.resolver);
  const { resolver, users, requests: requestsForNames } = names;
  // Every command that binds a state makes the account's user check; verify only reads, and leaves the state as it was.
  const state = await StateDir.open({ dir: options.stateDir, account: deps.account, existing: true, users, keepUsers: false });
  try {
    const checks: StepCheck[] = [];
    for (const [index, step] of prepared.entries()) {
      const journal = await loadJournal(state.journalFile(step.name));
      // Rows keyed otherwise than the run keyed them would find none of its records.
      assertSameKey(step, journal);
      const entity = (compiled[index] as CompiledMapping).entity;
      checks.push({ prepared: step, entity, journal, ids: idsOf(journal), records: new Map(), began: await firstRunTime(state.journalFile(step.name)), types: new Set() });
    }
    if (checks.every((check) => check.ids.size === 0 && check.journal.lines === 0)) {
      throw new FerryError('USAGE', `the state in ${state.dir} holds no run of ${prepared.map((s) => s.name).join(', ')}: nothing to verify`, {
        location: { file: state.dir },
        hint: 'Give the plan or mapping the run was made with, and the same --state-dir.',
      });
    }
    const service = new RecordService(deps.client, deps.signal);
    const beforeAdded = deps.client.transport.requestsSent;
    const added = await readAdded(service, checks);
    const requestsForAdded = deps.client.transport.requestsSent - beforeAdded;
    const planned = checks.map((check) => ({ step: check.prepared.name, records: check.ids.size, requests: requestsToRead(check.entity, check.ids.size) }));
    const plannedRequests = planned.reduce((sum, s) => sum + s.requests, 0);
    emit({ type: 'plan', steps: planned, requests: plannedRequests, requestsForNames, requestsForAdded });

    const limit = pLimit(options.concurrency);
    for (const check of checks) {
      check.records = await readRecords(service, check.entity, [...check.ids.values()].map((row) => row.id), limit);
    }

    const differences: VerifyDifference[] = [];
    const steps: VerifyStepSummary[] = [];
    const byName = new Map(checks.map((check) => [check.prepared.name, check]));
    for (const [index, check] of checks.entries()) {
      steps.push(await compareStep(check, compiled[index] as CompiledMapping, byName, resolver, differences, deps.signal));
    }
    for (const [entity, records] of added.records) {
      for (const record of records) {
        const check = stepFor(record, checks, entity);
        const counts = steps.find((s) => s.step === check?.prepared.name);
        if (!check || !counts) continue;
        counts.extra += 1;
        differences.push({ step: check.prepared.name, kind: 'extra', row: null, key: '', field: '', inFile: 'no row: not written by crm-ferry', inAccount: `${nameOf(record)} (record ${String(record.id)}), added to the account on ${String(record.createdAt)}`, id: record.id as number });
      }
    }
    const differencesFile = options.differencesFile ?? join(state.dir, 'results', 'verify.differences.csv');
    await writeDifferences(differencesFile, differences);
    const summary: VerifySummary = {
      stateDir: state.dir,
      steps,
      differences,
      differencesFile,
      requests: deps.client.transport.requestsSent - requestsAtStart,
      requestsForNames,
      requestsForAdded,
      plannedRequests,
      notListed: [...added.cut].map(([entity, listed]) => ({ entity, listed })),
      elapsedMs: Date.now() - started,
      matches: differences.length === 0,
    };
    emit({ type: 'end', summary });
    return summary;
  } finally {
    await state.close();
  }
}

async function compareStep(
  check: StepCheck,
  compiled: CompiledMapping,
  byName: Map<string, StepCheck>,
  resolver: NameResolver,
  differences: VerifyDifference[],
  signal: AbortSignal | undefined,
): Promise<VerifyStepSummary> {
  const step = check.prepared;
  const counts: VerifyStepSummary = {
    step: step.name,
    entity: check.entity,
    inputFile: step.inputFile,
    mappingFile: step.mappingFile,
    rows: 0,
    skipped: 0,
    found: 0,
    missing: 0,
    extra: 0,
    differing: 0,
    unresolved: 0,
    notCompared: 0,
  };
  const add = (difference: Omit<VerifyDifference, 'step'>): void => {
    differences.push({ step: step.name, ...difference });
  };
  const seen = new Set<string>();
  const opened = await openStepItems(step, compiled, signal);
  if (opened) {
    for await (const item of opened.items) {
      // Nothing was written: an interrupted verify is simply run again.
      signal?.throwIfAborted();
      counts.rows += 1;
      if (item.kind === 'skipped') {
        counts.skipped += 1;
        continue;
      }
      const key: string | null = item.key;
      if (key !== null && seen.has(key)) continue;
      if (key !== null) seen.add(key);
      if (item.kind === 'rejected') {
        // The row does not map: the run could not have written it as it is now.
        const earlier = key !== null ? check.ids.get(key) : undefined;
        counts.missing += 1;
        add({ kind: 'missing', row: item.row, key: key ?? '', field: item.field, inFile: `the row does not map: ${item.message}`, inAccount: earlier ? `record ${earlier.id}, written by an earlier run` : '', id: earlier?.id ?? null });
        continue;
      }
      if (typeof item.record.type === 'string') check.types.add(item.record.type);
      const known = check.ids.get(item.key);
      if (!known) {
        counts.missing += 1;
        const rejected = check.journal.rows.get(item.key)?.rejected;
        add({ kind: 'missing', row: item.row, key: item.key, field: '', inFile: 'a record', inAccount: rejected ? `never written: rejected (${rejected.code}: ${rejected.message})` : 'never written: no run wrote this row', id: null });
        continue;
      }
      const record = check.records.get(known.id);
      if (!record) {
        counts.missing += 1;
        add({ kind: 'missing', row: item.row, key: item.key, field: '', inFile: 'a record', inAccount: `record ${known.id} is no longer in the account`, id: known.id });
        continue;
      }
      counts.found += 1;
      if (known.origin === 'matched' && step.mapping.match?.onMatch === 'skip') {
        counts.notCompared += 1;
        continue;
      }
      const unresolved = link(item, byName, resolver, record);
      if (unresolved.length > 0) {
        counts.unresolved += 1;
        for (const problem of unresolved) add({ kind: 'unresolved', row: item.row, key: item.key, id: known.id, ...problem });
      }
      const changes = planUpdate(fromRecord(record, item.record), item.record, record).changes;
      const fields = Object.keys(changes).sort();
      if (fields.length > 0) counts.differing += 1;
      for (const field of fields) {
        const list = Array.isArray(changes[field]);
        add({
          kind: 'differs',
          row: item.row,
          key: item.key,
          field,
          // A list differs by the row's items the account lacks: those are shown.
          inFile: shown(list ? withoutIds(changes[field]) : item.record[field]),
          inAccount: shown(list ? withoutIds(record[field] ?? []) : fromRecord(record, { [field]: null })[field]),
          id: known.id,
        });
      }
    }
  }
  for (const [key, row] of check.ids) {
    if (seen.has(key) || row.origin !== 'created') continue;
    const record = check.records.get(row.id);
    if (!record) continue;
    counts.extra += 1;
    add({ kind: 'extra', row: null, key, field: '', inFile: 'no row with this key', inAccount: `record ${row.id}, created by run ${row.run ?? '?'}`, id: row.id });
  }
  return counts;
}

/**
 * Fills in a row's links from the journals' ids and its names from the account, as the importer
 * does; returns what did not resolve (with the account's value at that place).
 */
function link(mapped: MappedRecord, byName: Map<string, StepCheck>, resolver: NameResolver, record: Body): Array<Pick<VerifyDifference, 'field' | 'inFile' | 'inAccount'>> {
  const problems: Array<Pick<VerifyDifference, 'field' | 'inFile' | 'inAccount'>> = [];
  for (const ref of mapped.refs) {
    const lookup = lookUpRef(ref, (name, key) => byName.get(name)?.ids.get(key)?.id);
    if (lookup.status === 'found') {
      setAt(mapped.record, ref.path, lookup.value);
      continue;
    }
    const why = lookup.status === 'missing' ? `no record of ${ref.steps.join(' or ')} for '${ref.key}'` : `'${ref.key}' is a key of ${lookup.steps.join(' and ')}`;
    problems.push({ field: ref.yamlPath, inFile: `link to '${ref.key}' (${why})`, inAccount: shown(valueAt(record, ref.path.slice(0, 1))) });
  }
  for (const problem of resolveRecord(mapped, resolver)) problems.push({ field: problem.field, inFile: problem.message, inAccount: '' });
  return problems;
}

const COLUMNS = ['step', 'kind', 'row', 'key', 'field', 'in_file', 'in_account', 'id'];

/** The differences as CSV (UTF-8 with a BOM and CRLF, like the other result files), written whole under a temporary name and renamed. */
async function writeDifferences(file: string, differences: readonly VerifyDifference[]): Promise<void> {
  let text = `\uFEFF${COLUMNS.join(',')}\r\n`;
  for (const d of differences) {
    text += `${[d.step, d.kind, d.row === null ? '' : String(d.row), d.key, d.field, d.inFile, d.inAccount, d.id === null ? '' : String(d.id)].map(csvField).join(',')}\r\n`;
  }
  try {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    await writeFileAtomic(file, text);
  } catch (error) {
    throw new FerryError('EXPORT_WRITE', `cannot write the differences file ${file}: ${(error as Error).message}`, { location: { file }, cause: error, hint: 'Free the disk or give another --differences FILE, then run verify again.' });
  }
}
