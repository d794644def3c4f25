import { mkdir } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import pLimit from 'p-limit';
import { z } from 'zod';
import { type CrmClient, RecordService, type V1LiveConnection } from '../client/index.ts';
import { FerryError } from '../errors/index.ts';
import { type AccountIdentity, loadJournal, type LoadedJournal, readJournal, type RowState } from '../journal/index.ts';
import { assertSameKey, attachmentFilesOf, isMadeKey, openRun, attachmentsLacking, canonicalJson, fromRecord, planUpdate, readAttachments } from '../load/index.ts';
import { type CompiledMapping, csvField, type Entity, type MappedItem, type MappedRecord, type NameResolver, type Reason, reasonText, type RecordProblem, type RejectedRow, type TransformRegistry } from '../mapping/index.ts';
import { joinProblems, type LinkBook, linkedSteps, linkKeys, openStepItems, type PreparedStep, recordToSend, RowChecks, type RowOutcome, runSourceSchema } from '../plan/index.ts';
import { IdSet, KeySet, writeFileAtomic } from '../util/index.ts';
import { readable, rowNames, type RowNames } from './readable.ts';
import { neutraliseFormula } from '../util/index.ts';

type Body = Record<string, unknown>;

export const verifyOptionsSchema = z.object({
  /** One mapping over one input, or a whole plan: what the run was made with. */
  source: runSourceSchema,
  /** The state folder of the runs to check. */
  stateDir: z.string().min(1),
  /**
   * Where the CSV of the differences goes; the rows and values not carried go beside it (its name
   * with `not-carried` for `differences`, or `.not-carried` added). @default `<stateDir>/results/verify.differences.csv`
   */
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
 * - `missing`: the row's record is not in the account (deleted there since the run, or never
 *   written, though no run refused the row: a row added to the source since);
 * - `extra`: a record a run created whose row the source no longer has, or a party, project or
 *   opportunity created in the account since the first run that no run wrote (added by hand);
 * - `differs`: a field the account holds otherwise than the row maps to, or a row that maps no
 *   more though a run wrote it;
 * - `unresolved`: a link (or a name) of a row that has a record, which does not resolve now.
 */
export type DifferenceKind = 'missing' | 'extra' | 'differs' | 'unresolved';

/**
 * Where a difference came from since the run: the account (a record changed, deleted or added
 * there) or the source (a row changed, added or gone since the run wrote it).
 */
export type ChangedIn = 'account' | 'source';

export interface VerifyDifference {
  step: string;
  kind: DifferenceKind;
  changedIn: ChangedIn;
  /** The row as a spreadsheet shows it (the header is row 1); null for an extra record (its row is gone). */
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

/**
 * Something of the source the runs did not carry, by decision and with its reason: a row they
 * rejected (`rejected`), or a value they left out of a record they wrote (`dropped`: `onInvalid:
 * drop`, a link not made, an owner the account does not know, a file not there). No difference:
 * the account holds what the runs were told to write.
 */
export interface VerifyNotCarried {
  step: string;
  kind: 'rejected' | 'dropped';
  /** The row as a spreadsheet shows it. */
  row: number;
  key: string;
  /** The target or mapping place the reason is about; '' for the whole row. */
  field: string;
  /** The column the value was read from, when one column holds it. */
  column: string;
  /** The value as the source holds it ('' when the reason is not about one value). */
  value: string;
  code: string;
  /** The reason in the words of the person who owns the data (reasonText). */
  reason: string;
  /** Where the rule is in the mapping, for the person who edits it; '' when it is no rule's. */
  rule: string;
  /** The record written without the value; null for a rejected row. */
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
  /** Rows in the account as in the file: their record found and equal, or named again by a later row (onDuplicate). */
  carried: number;
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
  /** Rows the runs rejected, each with its reason: not carried, by decision. */
  rejected: number;
  /** Values the runs left out of records they wrote, each with its reason: not carried, by decision. */
  dropped: number;
}

export interface VerifySummary {
  stateDir: string;
  steps: VerifyStepSummary[];
  /** Every difference, in step order, then row order; records added in the account last. */
  differences: VerifyDifference[];
  differencesFile: string;
  /** Rows rejected and values dropped by the runs, with their reasons, in step and row order. */
  notCarried: VerifyNotCarried[];
  notCarriedFile: string;
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
  /** True when nothing differs (whatever was not carried by decision). */
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
  /** The account the state must belong to. @default accountOf(client): the client's own address */
  account?: AccountIdentity | undefined;
  signal?: AbortSignal;
  onEvent?: (event: VerifyEvent) => void;
  /** Names of the account; read once from the account when absent. */
  resolver?: NameResolver;
  /** How live v1 inputs (`v1+https://HOST`) are reached; a step with one is refused without it. */
  v1Live?: V1LiveConnection;
  /** The transforms the mappings may name: the built-in ones and the caller's (transformRegistry). @default TRANSFORMS */
  transforms?: TransformRegistry;
}

/** The requests that reading `count` records of `entity` takes. */
export function requestsToRead(entity: Entity, count: number): number {
  return FILTERABLE.has(entity) ? Math.ceil(count / VERIFY_BATCH) : count;
}

/** The row of `key` when the journal holds a record id for it: what the account should have. */
function idRow(journal: LoadedJournal, key: string): (RowState & { id: number }) | undefined {
  const row = journal.rows.get(key);
  return row && row.id !== null ? (row as RowState & { id: number }) : undefined;
}

/** How many rows of the journal hold a record id (a walk: the journal's rows are not a list kept twice). */
function idCount(journal: LoadedJournal): number {
  let count = 0;
  for (const row of journal.rows.values()) if (row.id !== null) count += 1;
  return count;
}

/** Rows compared while the queries of the rows after them are under way. */
const VERIFY_WINDOW = 1000;

/** A record asked for: its query sent (or still waiting for more ids), and its answer (undefined: not in the account). */
interface Wanted {
  id: number;
  sent: boolean;
  record: Promise<Body | undefined>;
}

/** A row (or a record of the journal whose row is gone) waiting in turn to be compared. */
interface Queued {
  wanted: Wanted | null;
  run(): Promise<void>;
}

/**
 * The account's records as a step's comparison asks for them: ids gathered into queries of a
 * page (VERIFY_BATCH) where the kind has a filter, else read one GET each; each record handed to
 * the one row that asked for it and then let go.
 */
class RecordWindow {
  #batch: Array<{ wanted: Wanted; answer(record: Body | undefined): void; fail(error: unknown): void }> = [];

  constructor(
    private readonly service: RecordService,
    private readonly entity: Entity,
    private readonly limit: ReturnType<typeof pLimit>,
  ) {}

  want(id: number): Wanted {
    let answer!: (record: Body | undefined) => void;
    let fail!: (error: unknown) => void;
    const record = new Promise<Body | undefined>((ok, no) => ((answer = ok), (fail = no)));
    // Awaited when its row's turn comes: a failure before then is not an unhandled one.
    record.catch(() => undefined);
    const wanted: Wanted = { id, sent: false, record };
    this.#batch.push({ wanted, answer, fail });
    if (this.#batch.length >= (FILTERABLE.has(this.entity) ? VERIFY_BATCH : 1)) this.flush();
    return wanted;
  }

  /** A record asked for and sent at once. */
  wantNow(id: number): Promise<Body | undefined> {
    const wanted = this.want(id);
    this.flush();
    return wanted.record;
  }

  /** Sends the ids gathered. */
  flush(): void {
    const batch = this.#batch;
    if (batch.length === 0) return;
    this.#batch = [];
    for (const item of batch) item.wanted.sent = true;
    readRecords(
      this.service,
      this.entity,
      batch.map((item) => item.wanted.id),
      this.limit,
    ).then(
      (found) => {
        for (const item of batch) item.answer(found.get(item.wanted.id));
      },
      (error: unknown) => {
        for (const item of batch) item.fail(error);
      },
    );
  }
}

interface StepCheck {
  prepared: PreparedStep;
  entity: Entity;
  journal: LoadedJournal;
  /** How many of the journal's rows hold a record id: the records verify reads. */
  written: number;
  /** When the step's first run began (its journal's first line), or null for a step never run. */
  began: Date | null;
  /** The party types (person, organisation) the step's rows map to: where a record added by hand belongs. */
  types: Set<string>;
  /** Keys of rows folded into another row's record (onDuplicate) -> that row's key, as the run links them. */
  aliases: Map<string, string>;
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
    const known = new IdSet();
    for (const check of mine) for (const row of check.journal.rows.values()) if (row.id !== null) known.add(row.id);
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
  // Only the lists of names the mappings can hold: verify creates nothing. Every command that binds
  // a state makes the account's user check; verify only reads, and leaves the state as it was.
  const {
    steps: prepared,
    compiled,
    names,
    state,
  } = await openRun(
    { source: options.source, prepare: { live: { connection: deps.v1Live }, transforms: deps.transforms }, state: { dir: options.stateDir, account: deps.account, existing: true, keepUsers: false } },
    { client: deps.client, resolver: deps.resolver },
  );
  const { resolver, requests: requestsForNames } = names;
  try {
    const checks: StepCheck[] = [];
    for (const [index, step] of prepared.entries()) {
      const journal = await loadJournal(state.journalFile(step.name));
      // Rows keyed otherwise than the run keyed them would find none of its records.
      assertSameKey(step, journal);
      const entity = (compiled[index] as CompiledMapping).entity;
      checks.push({ prepared: step, entity, journal, written: idCount(journal), began: await firstRunTime(state.journalFile(step.name)), types: new Set(), aliases: new Map() });
    }
    if (checks.every((check) => check.written === 0 && check.journal.lines === 0)) {
      throw new FerryError('USAGE', `the state in ${state.dir} holds no run of ${prepared.map((s) => s.name).join(', ')}: nothing to verify`, {
        location: { file: state.dir },
        hint: 'Give the plan or mapping the run was made with, and the same --state-dir.',
      });
    }
    const service = new RecordService(deps.client, deps.signal);
    const beforeAdded = deps.client.transport.requestsSent;
    const added = await readAdded(service, checks);
    const requestsForAdded = deps.client.transport.requestsSent - beforeAdded;
    const planned = checks.map((check) => ({ step: check.prepared.name, records: check.written, requests: requestsToRead(check.entity, check.written) }));
    const plannedRequests = planned.reduce((sum, s) => sum + s.requests, 0);
    emit({ type: 'plan', steps: planned, requests: plannedRequests, requestsForNames, requestsForAdded });

    const limit = pLimit(options.concurrency);

    const found: Found = { differences: [], notCarried: [], namedOrganisations: new Set() };
    const steps: VerifyStepSummary[] = [];
    const byName = new Map(checks.map((check) => [check.prepared.name, check]));
    const links = verifyLinks(byName);
    for (const [index, check] of checks.entries()) {
      steps.push(await compareStep(check, compiled[index] as CompiledMapping, { links, linked: linkedSteps(prepared), resolver, found, signal: deps.signal, service, limit }));
    }
    for (const [entity, records] of added.records) {
      for (const record of records) {
        // An organisation a person's plain-name link made the service create is the run's doing.
        if (entity === 'party' && record.type === 'organisation' && typeof record.name === 'string' && found.namedOrganisations.has(nameKey(record.name))) continue;
        const check = stepFor(record, checks, entity);
        const counts = steps.find((s) => s.step === check?.prepared.name);
        if (!check || !counts) continue;
        counts.extra += 1;
        found.differences.push({
          step: check.prepared.name,
          kind: 'extra',
          changedIn: 'account',
          row: null,
          key: '',
          field: '',
          inFile: 'no row: not written by crm-ferry',
          inAccount: `${nameOf(record)} (record ${String(record.id)}), added to the account on ${String(record.createdAt)}`,
          id: record.id as number,
        });
      }
    }
    const differencesFile = options.differencesFile ?? join(state.dir, 'results', 'verify.differences.csv');
    const notCarriedFile = notCarriedFileOf(differencesFile);
    await writeCsv(differencesFile, DIFFERENCE_COLUMNS, found.differences.map(differenceCells), 'differences');
    await writeCsv(notCarriedFile, NOT_CARRIED_COLUMNS, found.notCarried.map(notCarriedCells), 'not-carried');
    const summary: VerifySummary = {
      stateDir: state.dir,
      steps,
      differences: found.differences,
      differencesFile,
      notCarried: found.notCarried,
      notCarriedFile,
      requests: deps.client.transport.requestsSent - requestsAtStart,
      requestsForNames,
      requestsForAdded,
      plannedRequests,
      notListed: [...added.cut].map(([entity, listed]) => ({ entity, listed })),
      elapsedMs: Date.now() - started,
      matches: found.differences.length === 0,
    };
    emit({ type: 'end', summary });
    return summary;
  } finally {
    await state.close();
  }
}

/** What the comparison finds, over all steps. */
interface Found {
  differences: VerifyDifference[];
  notCarried: VerifyNotCarried[];
  /** Organisations the rows link to by plain name, which the service finds or creates (nameKey). */
  namedOrganisations: Set<string>;
}

/** A name as the service finds an organisation by it: case aside. */
function nameKey(name: string): string {
  return name.trim().toLowerCase();
}

function stepList(steps: readonly string[]): string {
  return steps.length === 1 ? `step ${steps[0]}` : `steps ${steps.join(', ')}`;
}

/**
 * Links as the runs made them: a key finds the record the journal of its step holds for it (or
 * for the row it was folded into); a row without a record finds nothing, as it found nothing in
 * the run that left it without one.
 */
function verifyLinks(byName: ReadonlyMap<string, StepCheck>): LinkBook {
  return {
    find: (name, key) => {
      const check = byName.get(name);
      return check ? idRow(check.journal, check.aliases.get(key) ?? key)?.id : undefined;
    },
    ambiguous: (key, steps) => `'${key}' is a key of ${stepList(steps)}: the link cannot tell which record is meant`,
    unresolved: (ref) =>
      `links to ${linkKeys(ref)
        .map((key) => `'${key}'`)
        .join(', then ')} in ${stepList(ref.steps)}, which has no record for it`,
  };
}

/** Warnings that leave something of the row out of its record: listed as not carried. */
const LEFT_OUT: ReadonlySet<string> = new Set(['VALUE_DROPPED', 'LINK_UNRESOLVED', 'USER_UNKNOWN', 'NOT_CARRIED', 'DUPLICATE_DROPPED']);

async function compareStep(
  check: StepCheck,
  compiled: CompiledMapping,
  context: { links: LinkBook; linked: ReadonlySet<string>; resolver: NameResolver; found: Found; signal: AbortSignal | undefined; service: RecordService; limit: ReturnType<typeof pLimit> },
): Promise<VerifyStepSummary> {
  const step = check.prepared;
  const { found, signal } = context;
  const counts: VerifyStepSummary = {
    step: step.name,
    entity: check.entity,
    inputFile: step.inputFile,
    mappingFile: step.mappingFile,
    rows: 0,
    skipped: 0,
    carried: 0,
    found: 0,
    missing: 0,
    extra: 0,
    differing: 0,
    unresolved: 0,
    notCompared: 0,
    rejected: 0,
    dropped: 0,
  };
  const add = (difference: Omit<VerifyDifference, 'step'>): void => {
    found.differences.push({ step: step.name, ...difference });
  };
  const notCarried = (item: Omit<VerifyNotCarried, 'step' | 'reason'>, reason: Reason): void => {
    found.notCarried.push({ step: step.name, ...item, reason: reasonText(reason) });
  };
  // The run's row checks: a row verify reads is what the run made of it.
  const checks = new RowChecks(step.name, step.mapping, context.linked.has(step.name));
  const seen = checks.seen;
  // The account's records are read as the rows come, 100 ids a query, and each row compared once
  // its query is answered: a window of rows and their records is held, never the whole account.
  // Each id of the journal is asked for once (the input's rows first, then the rows gone from it),
  // so the queries are the ones the plan announced.
  const records = new RecordWindow(context.service, check.entity, context.limit);
  const asked = new KeySet();
  const queue: Queued[] = [];
  const drain = async (all: boolean): Promise<void> => {
    while (queue.length > 0) {
      const head = queue[0] as Queued;
      if (head.wanted) {
        // Rows behind it keep the next queries under way while this one's is awaited.
        if (!all && queue.length <= VERIFY_WINDOW) return;
        if (!head.wanted.sent) {
          // Its query waits for more ids; past many rows without them it goes as it is.
          if (!all && queue.length <= VERIFY_WINDOW * 8) return;
          records.flush();
        }
      }
      queue.shift();
      await head.run();
    }
  };
  const compareRow = async (read: MappedItem, outcome: RowOutcome, wanted: Wanted | null): Promise<void> => {
    const recordOf = (id: number): Promise<Body | undefined> => (wanted && wanted.id === id ? wanted.record : records.wantNow(id));
    const row = read.location.row;
    if (outcome.kind === 'skipped') {
      counts.skipped += 1;
      return;
    }
    if (outcome.kind === 'folded' || outcome.kind === 'repeated') {
      // Folded into an earlier row of its record (onDuplicate), or that record named again:
      // carried with that row's record.
      if (outcome.kind === 'folded' && outcome.key !== outcome.into) check.aliases.set(outcome.key, outcome.into);
      counts.carried += 1;
      return;
    }
    if (outcome.kind === 'rejected' && read.kind === 'record') {
      // A key or match value an earlier row has: the run refused this row too.
      const refusal = outcome.rejected;
      counts.rejected += 1;
      notCarried({ kind: 'rejected', row, key: read.key, field: refusal.field, column: refusal.column ?? '', value: valueOf(refusal), code: refusal.code, rule: refusal.rule ?? '', id: null }, refusal);
      return;
    }
    const item = read as MappedRecord | RejectedRow;
    const key: string | null = item.key;
    const known = key !== null ? idRow(check.journal, key) : undefined;
    if (item.kind === 'rejected') {
      if (known) {
        // The run wrote it; the row as it is now does not map: it changed in the source since.
        counts.differing += 1;
        add({ kind: 'differs', changedIn: 'source', row, key: key ?? '', field: item.field, inFile: `the row does not map now: ${reasonText(item)}`, inAccount: `record ${known.id}, written by an earlier run`, id: known.id });
        return;
      }
      if (key !== null && !check.journal.rows.get(key)?.rejected) {
        // No run saw it: a row added to the source since.
        counts.missing += 1;
        add({ kind: 'missing', changedIn: 'source', row, key, field: item.field, inFile: `a row that does not map: ${reasonText(item)}`, inAccount: 'never written: no run read this row', id: null });
        return;
      }
      counts.rejected += 1;
      notCarried({ kind: 'rejected', row, key: key ?? '', field: item.field, column: item.column ?? '', value: valueOf(item), code: item.code, rule: item.rule ?? '', id: null }, item);
      return;
    }
    if (typeof item.record.type === 'string') check.types.add(item.record.type);
    if (!known) {
      const refused = check.journal.rows.get(item.key)?.rejected;
      if (!refused) {
        counts.missing += 1;
        add({ kind: 'missing', changedIn: 'source', row, key: item.key, field: '', inFile: 'a record', inAccount: 'never written: no run wrote this row', id: null });
        return;
      }
      // Refused by the run: its reason as the row gives it now, or as the run was told it (the service's refusal).
      const now = await recordToSend(item, { entity: check.entity, links: context.links, resolver: context.resolver, files: readAttachments });
      const reason: RecordProblem = now.kind === 'problems' ? joinProblems(now.problems) : { field: '', code: refused.code as RecordProblem['code'], message: refused.message };
      counts.rejected += 1;
      notCarried({ kind: 'rejected', row, key: item.key, field: reason.field, column: '', value: '', code: reason.code, rule: now.kind === 'problems' ? reason.field : '', id: null }, reason);
      return;
    }
    const record = await recordOf(known.id);
    if (!record) {
      counts.missing += 1;
      add({ kind: 'missing', changedIn: 'account', row, key: item.key, field: '', inFile: 'a record', inAccount: `record ${known.id} is no longer in the account`, id: known.id });
      return;
    }
    counts.found += 1;
    if (known.origin === 'matched' && step.mapping.match?.onMatch === 'skip') {
      counts.notCompared += 1;
      return;
    }
    const sent = await recordToSend(item, { entity: check.entity, links: context.links, resolver: context.resolver, files: readAttachments });
    if (sent.kind === 'problems') {
      counts.unresolved += 1;
      for (const problem of sent.problems) {
        add({ kind: 'unresolved', changedIn: problem.code === 'MAPPING_UNKNOWN_NAME' ? 'account' : 'source', row, key: item.key, field: problem.field, inFile: problem.message, inAccount: '', id: known.id });
      }
      return;
    }
    const body = sent.body;
    const organisation = body.organisation as Body | undefined;
    if (organisation && typeof organisation.name === 'string' && organisation.id === undefined) found.namedOrganisations.add(nameKey(organisation.name));
    // A note of the writing user that an earlier version headed with its author is as carried.
    const held = item.contentAlso !== undefined && record.content === item.contentAlso ? { ...record, content: body.content } : record;
    const differing = compareRecord(body, held, known.body, rowNames(item, body, held));
    if (differing.length > 0) counts.differing += 1;
    else counts.carried += 1;
    for (const difference of differing) add({ ...difference, row, key: item.key, id: known.id });
    for (const warning of item.warnings ?? []) {
      if (!LEFT_OUT.has(warning.code)) return;
      counts.dropped += 1;
      notCarried({ kind: 'dropped', row, key: item.key, field: warning.field, column: warning.column ?? '', value: warning.value ?? '', code: warning.code, rule: warning.rule ?? '', id: known.id }, warning);
    }
  };
  const opened = await openStepItems(step, compiled, signal);
  if (opened) {
    for await (const read of opened.items) {
      // Nothing was written: an interrupted verify is simply run again.
      signal?.throwIfAborted();
      counts.rows += 1;
      const outcome = checks.check(read);
      let wanted: Wanted | null = null;
      if (outcome.kind === 'ready' && !asked.has(outcome.mapped.key)) {
        const id = idRow(check.journal, outcome.mapped.key)?.id;
        if (id !== undefined) {
          asked.add(outcome.mapped.key);
          wanted = records.want(id);
        }
      }
      queue.push({ wanted, run: () => compareRow(read, outcome, wanted) });
      await drain(false);
    }
  }
  for (const row of check.journal.rows.values()) {
    if (row.id === null || asked.has(row.key)) continue;
    // Read though it may not be compared, as the plan counted it.
    const wanted = records.want(row.id);
    const { key, id, run } = { key: row.key, id: row.id, run: row.run };
    // An organisation made for a link by name is the run's, and no row of the input.
    const extra = !seen.has(key) && row.origin === 'created' && !isMadeKey(key);
    queue.push({
      wanted,
      run: async () => {
        const record = await wanted.record;
        if (!extra || !record) return;
        counts.extra += 1;
        add({ kind: 'extra', changedIn: 'source', row: null, key, field: '', inFile: 'no row with this key', inAccount: `record ${id}, created by run ${run ?? '?'}`, id });
      },
    });
    await drain(false);
  }
  records.flush();
  await drain(true);
  return counts;
}

/** The value a reason is about: the one given, else the cell of its column. */
function valueOf(reason: Partial<Pick<RejectedRow, 'value' | 'column' | 'values'>>): string {
  if (reason.value !== undefined) return reason.value;
  const cell = reason.column === undefined ? undefined : reason.values?.[reason.column];
  return cell === undefined || cell === null ? '' : cell instanceof Date ? cell.toISOString() : String(cell);
}

/**
 * The fields in which the account's record is not what the row sends: what `--full` would write
 * back (every field the row maps to, lists item by item), and what a run would clear or remove
 * because the row no longer has it (a field or item the last run wrote that the row lacks now).
 * A field the mapping does not write is never looked at. Each says whether the source changed
 * it since the run (the last written body differs there) or the account did.
 */
function compareRecord(body: Body, record: Body, written: Body | null, names: RowNames): Array<Pick<VerifyDifference, 'kind' | 'changedIn' | 'field' | 'inFile' | 'inAccount'>> {
  const account = planUpdate(fromRecord(record, body), body, record).changes;
  // What a run of the row as it is now would send after the last one: values the row dropped since.
  const since = written ? planUpdate(written, body, record).changes : {};
  const out: Array<Pick<VerifyDifference, 'kind' | 'changedIn' | 'field' | 'inFile' | 'inAccount'>> = [];
  const changedInSource = (field: string): boolean => written !== null && canonicalJson(written[field]) !== canonicalJson(body[field]);
  for (const field of new Set([...Object.keys(account), ...Object.keys(since)])) {
    const list = Array.isArray(account[field] ?? since[field]);
    const inAccount = readable(field, record[field], names);
    if (!(field in account)) {
      // Only in what a run would send: the row no longer has what the account holds there.
      if (!list && isBlank(record[field])) continue;
      out.push({ kind: 'differs', changedIn: 'source', field, inFile: readable(field, body[field], names), inAccount });
      continue;
    }
    // A list differs by the row's items the account lacks: those are shown.
    out.push({ kind: 'differs', changedIn: changedInSource(field) ? 'source' : 'account', field, inFile: readable(field, list ? account[field] : body[field], names), inAccount });
  }
  // A note's files, by name and size: a file of the row the note lacks.
  const lacking = attachmentsLacking(attachmentFilesOf(body), record);
  if (lacking.length > 0) {
    out.push({
      kind: 'differs',
      changedIn: changedInSource('attachments') ? 'source' : 'account',
      field: 'attachments',
      inFile: lacking.map((file) => file.filename).join('; '),
      inAccount: readable('attachments', record.attachments, names),
    });
  }
  return out.sort((a, b) => a.field.localeCompare(b.field));
}

function isBlank(value: unknown): boolean {
  return value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);
}

/** The file of the rows and values not carried, beside the differences file. */
export function notCarriedFileOf(differencesFile: string): string {
  const name = basename(differencesFile);
  const own = /differences/i.test(name) ? name.replace(/differences/i, 'not-carried') : `${basename(name, extname(name))}.not-carried${extname(name) || '.csv'}`;
  return join(dirname(differencesFile), own);
}

const DIFFERENCE_COLUMNS = ['step', 'kind', 'changed_in', 'row', 'key', 'field', 'in_file', 'in_account', 'id'];

function differenceCells(d: VerifyDifference): string[] {
  return [d.step, d.kind, d.changedIn, d.row === null ? '' : String(d.row), d.key, d.field, d.inFile, d.inAccount, d.id === null ? '' : String(d.id)];
}

const NOT_CARRIED_COLUMNS = ['step', 'kind', 'row', 'key', 'column', 'value', 'reason', 'code', 'rule', 'id'];

function notCarriedCells(n: VerifyNotCarried): string[] {
  return [n.step, n.kind, String(n.row), n.key, n.column, n.value, n.reason, n.code, n.rule, n.id === null ? '' : String(n.id)];
}

/** A CSV file (UTF-8 with a BOM and CRLF, like the other result files), written whole under a temporary name and renamed. */
async function writeCsv(file: string, columns: readonly string[], rows: ReadonlyArray<readonly string[]>, what: string): Promise<void> {
  let text = `\uFEFF${columns.join(',')}\r\n`;
  for (const cells of rows) text += `${cells.map((cell) => csvField(neutraliseFormula(cell))).join(',')}\r\n`;
  try {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    await writeFileAtomic(file, text);
  } catch (error) {
    throw new FerryError('EXPORT_WRITE', `cannot write the ${what} file ${file}: ${(error as Error).message}`, { location: { file }, cause: error, hint: 'Free the disk or give another --differences FILE, then run verify again.' });
  }
}
