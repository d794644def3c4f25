/**
 * The importer's part that acts on one record: links it to the records of other steps, looks it
 * up under `match:`, then creates, adopts or updates it, each write announced in the step's
 * journal first, and sends it to the success or rejects file. It is handed the run's context
 * (run-context.ts); run-import.ts runs the plan (steps, order, reconcile, rows of a step, missing
 * rows, results, summary) and hands it each row.
 */
import { AmbiguousWriteError, ApiError } from '../client/index.ts';
import { type ErrorCode } from '../errors/index.ts';
import type { JournalEntry, RowState } from '../journal/index.ts';
import {
  columnsOfSpec,
  countWarnings,
  type Mapping,
  type MappedRecord,
  type MatchSpec,
  reasonText,
  type RecordProblem,
  type RejectedRow,
  RejectsWriter,
  warningsText,
} from '../mapping/index.ts';
import {
  joinProblems,
  judgeMatch,
  type LinkBook,
  type LinkTarget,
  unresolvedText,
  type Matcher,
  recordToSend,
  rejectedRow,
} from '../plan/index.ts';
import { attachmentFilesOf, planAttachments, readAttachments } from './attachments.ts';
import { canonicalJson, fingerprint } from './fingerprint.ts';
import { beforeImage, contactIdsOf, planContacts, planRecordUpdate, planUpdate, withoutApart } from './update-plan.ts';
import { SuccessWriter, type RowAction } from './results.ts';
import { ReconcileIndex } from './reconcile.ts';
import { LostCreates } from './lost-creates.ts';
import { linkedByName, madeKey } from './made-by-name.ts';
import type { RunContext } from './run-context.ts';
import { StepRun } from './step-run.ts';

type Body = Record<string, unknown>;

/**
 * How many times a row's create may be lost (sent, no answer, then found not applied) before the
 * row is rejected: the service failing one write that often while it answers the lookups is a
 * fault of that write, not an outage; --retry-rejects sends it again.
 */
const MAX_LOST_CREATES = 10;

const ROW_LEVEL: ReadonlySet<ErrorCode> = new Set([
  'API_VALIDATION',
  'API_BAD_REQUEST',
  'API_NOT_FOUND',
  'API_CONFLICT',
]);

/** The service refused this row for what it holds: it goes to the rejects, the run goes on. */
function isRowLevel(error: unknown): error is ApiError {
  return error instanceof ApiError && !(error instanceof AmbiguousWriteError) && ROW_LEVEL.has(error.code);
}

/** The intent of a create, queued in the step's journal: its time, and its line there. */
interface Announced {
  at: string;
  line: number | null;
}

/** A create under way: its number, its intent when queued ahead, and what it sends (with uploads made once). */
interface CreateAttempt {
  number: number;
  announced: Announced | null;
  sent: Body | null;
}

/** A create that was sent and whose answer never came. */
interface LostAnswer {
  /** When its intent was written. */
  at: string;
  error: AmbiguousWriteError;
}

/** The service's list for a target of the mapping (`emailAddresses[0].address` is the `email` target's). */
const TARGET_OF_LIST: Readonly<Record<string, string>> = {
  emailAddresses: 'email',
  phoneNumbers: 'phone',
  websites: 'website',
  addresses: 'address',
};

/**
 * The service's refusal of a row as reasons a person reads: each field it names is a reason of its
 * own with the service's words whole, and the column it came from where one field entry of the
 * mapping writes that target from one column.
 */
function serviceProblems(error: ApiError, mapping: Pick<Mapping, 'fields'>): RecordProblem[] {
  if (error.fieldErrors.length === 0)
    return [{ field: '', code: error.code, message: error.serviceMessage ?? error.message }];
  return error.fieldErrors.map((fieldError) => {
    const field = fieldError.field ?? '';
    const head = /^[A-Za-z]+/.exec(field)?.[0] ?? '';
    const target = TARGET_OF_LIST[head] ?? head;
    const entries = mapping.fields.filter((entry) => entry.to === target);
    const columns = entries.length === 1 ? columnsOfSpec((entries[0] as (typeof entries)[number]).value) : [];
    const problem: RecordProblem = {
      field,
      code: error.code,
      message: field === '' ? fieldError.message : `${fieldError.message} (the service, at ${field})`,
    };
    if (columns.length === 1) problem.column = columns[0] as string;
    return problem;
  });
}

/** A row ready to be written (RecordSender.write). */
interface RowToWrite {
  mapped: MappedRecord;
  /** What is sent, and its fingerprint (what the journal keeps to tell a changed row). */
  body: Body;
  fp: string;
  /** The record an earlier run wrote for the row, from the journal; null for a row it does not know. */
  known: (RowState & { id: number }) | null;
  /** The account's record the row takes instead of creating one, and why; null to create. */
  found: Found | null;
}

/**
 * The account's record a new row takes, and why: `match:` found it, an earlier row made it by name
 * (updated with this row), or an earlier run made it for this row though its journal line was lost
 * (--reconcile).
 */
interface Found {
  record: Body;
  by: 'match' | 'name' | 'own';
}

function stepList(steps: readonly string[]): string {
  return steps.length === 1 ? `step ${steps[0]}` : `steps ${steps.join(', ')}`;
}

/** A body without what is sent apart (a project's additional contacts), and its fingerprint. */
function apart(mapped: MappedRecord, whole: Body, wholeFp: string): { body: Body; fp: string } {
  if (contactIdsOf(whole).length === 0) return { body: whole, fp: wholeFp };
  const body = withoutApart(whole);
  return { body, fp: fingerprint({ body, attachments: mapped.attachments }) };
}

export class RecordSender {
  /**
   * Where this run's links are found: the records of the other steps' rows, waited for while those
   * rows are still on their way; a row not written in the end finds nothing.
   */
  readonly links: LinkBook;

  constructor(readonly ctx: RunContext) {
    this.links = {
      find: (name, key) => {
        const step = this.ctx.byName.get(name);
        const id = step?.idOf(key) ?? null;
        // A row that was read and rejected is there, unlike a key no row has (as validate tells them).
        const target = (value: number | null): LinkTarget =>
          value ?? (step?.rejectedKeys.has(key) ? 'rejected' : undefined);
        return id instanceof Promise ? id.then(target) : target(id);
      },
      ambiguous: (key, steps) => `'${key}' is a key of ${stepList(steps)}: the link cannot tell which record is meant`,
      // As validate says it; a row past --limit was not read, which validate cannot know.
      unresolved: (ref, tried) =>
        `${unresolvedText(ref, tried)}${this.ctx.options.limit !== null ? ' (it may lie past --limit)' : ''}`,
    };
  }

  rejection(mapped: MappedRecord, problem: RecordProblem, status?: number): RejectedRow {
    return rejectedRow(mapped, problem, status);
  }

  /**
   * A row that goes to the rejects file. Its reject is journalled (so that --retry-rejects finds
   * it) and rows that link to it learn it was not written, unless `own` is false: a duplicate key
   * belongs to the row that had it first.
   */
  async reject(step: StepRun, rejected: RejectedRow, own = true): Promise<void> {
    step.counts.rejected += 1;
    if (own && rejected.key) {
      step.rejectedKeys.add(rejected.key);
      step.settleUnwritten(rejected.key);
      const entry: JournalEntry = {
        t: 'reject',
        k: rejected.key,
        run: this.ctx.runId,
        at: this.ctx.at(),
        code: rejected.code,
        message: rejected.message,
      };
      if (rejected.status !== undefined) entry.status = rejected.status;
      await this.ctx.journal(step, entry);
    }
    step.reasons.add(rejected);
    step.rejects ??= RejectsWriter.open(this.ctx.rejectsFile(step), step.header, { status: true });
    await (await step.rejects).write(rejected);
    this.ctx.emit({
      type: 'row',
      step: step.name,
      row: rejected.location.row,
      key: rejected.key,
      action: 'rejected',
      code: rejected.code,
      message: rejected.message,
      reason: reasonText(rejected),
    });
  }

  async succeed(step: StepRun, mapped: MappedRecord, action: RowAction, id: number): Promise<void> {
    step.counts[action] += 1;
    countWarnings(step.warnings, mapped.warnings);
    step.settle(mapped.key, id);
    if (this.ctx.options.dryRun) return;
    await this.writeSuccess(step, mapped.location.row, mapped.key, action, id, warningsText(mapped.warnings));
    this.ctx.emit({
      type: 'row',
      step: step.name,
      row: mapped.location.row,
      key: mapped.key,
      action,
      id,
      ...(mapped.warnings ? { warnings: mapped.warnings } : {}),
    });
  }

  /** A line of the step's success file, which is opened at its first line. */
  async writeSuccess(
    step: StepRun,
    row: number,
    key: string,
    action: RowAction,
    id: number,
    warnings = '',
  ): Promise<void> {
    step.success ??= SuccessWriter.open(this.ctx.state.resultFile(step.name, 'success'));
    await (await step.success).write({
      row,
      key,
      action,
      id,
      url: this.ctx.service.urlOf(step.compiled.entity, id),
      warnings,
    });
  }

  async processRecord(step: StepRun, mapped: MappedRecord): Promise<void> {
    const sent = await recordToSend(mapped, {
      entity: step.compiled.entity,
      links: this.links,
      resolver: this.ctx.resolver,
      files: readAttachments,
    });
    if (sent.kind === 'problems') {
      const problem = joinProblems(sent.problems);
      return this.reject(step, this.rejection(mapped, problem));
    }
    const body = sent.body;
    const fp = fingerprint({ body, attachments: mapped.attachments });
    const prior = step.journal.rows.get(mapped.key);
    const known = prior?.id !== undefined && prior.id !== null ? (prior as RowState & { id: number }) : null;
    // A record matched under `onMatch: skip` is the account's, not the input's: left alone.
    if (known && known.origin === 'matched' && step.match?.onMatch === 'skip')
      return this.succeed(step, mapped, 'matched', known.id);
    if (known && !this.ctx.options.full && known.fp === fp) return this.succeed(step, mapped, 'unchanged', known.id);
    let found: Found | null = null;
    if (!known && step.matcher) {
      const match = await this.lookUp(step, mapped, body);
      if (match === 'rejected') return;
      if (match) found = { record: match, by: 'match' };
    }
    // The organisation an earlier row made by name (its company's row was rejected then): this
    // row is that organisation's, and updates it rather than making a second of the same name.
    if (!known && !found) {
      const name =
        step.compiled.entity === 'party' && body.type === 'organisation' && typeof body.name === 'string'
          ? body.name
          : undefined;
      const made = name === undefined ? undefined : this.ctx.made.take(name);
      const record = made === undefined ? null : await this.ctx.service.read('party', made);
      if (record) found = { record, by: 'name' };
    }
    // --reconcile: a row the journal does not know may have a record an earlier run made.
    if (!known && !found && this.ctx.options.reconcile) {
      step.reconcile ??= new ReconcileIndex(this.ctx.service, step.compiled.entity, this.ctx.state.created, (id) =>
        step.taken.has(id),
      );
      const record = await step.reconcile.find(body);
      if (record) {
        step.taken.add(record.id as number);
        found = { record, by: 'own' };
      }
    }
    step.ready += 1;
    try {
      await this.write(step, { mapped, body, fp, known, found });
    } finally {
      step.ready -= 1;
      // Its look-up held back for others to share it, a row waits no longer than the writes have rows to write.
      step.matcher?.release();
    }
  }

  /**
   * Creates, adopts or updates a row's record (in a dry run, counts what that would send); `found`
   * says which record of the account the row takes, and why.
   */
  async write(step: StepRun, row: RowToWrite): Promise<void> {
    const { mapped, body, fp, known, found } = row;
    if (this.ctx.options.dryRun) return this.countDry(step, mapped, body, known, found?.record ?? null);
    // The intent of a plain create is queued while the row waits for a slot: the row that first
    // needs its own on disk writes every intent queued by then in one group, so that the rows
    // behind it find theirs there when their slot comes.
    const announced =
      !known && !found && mapped.attachments.length === 0 && contactIdsOf(body).length === 0
        ? this.announce(step, mapped, body, fp)
        : null;
    const attempt: CreateAttempt = { number: 1, announced, sent: null };
    for (;;) {
      const lost = await this.ctx.slots.run(async (): Promise<LostAnswer | null> => {
        if (this.ctx.halt.signal.aborted) {
          step.counts.notReached += 1;
          step.settleUnwritten(mapped.key);
          // Never sent: the next run need not look for it (the cancel follows its intent in the file).
          if (attempt.announced)
            await this.ctx.journal(step, { t: 'cancel', k: mapped.key, run: this.ctx.runId, at: this.ctx.at() });
          return null;
        }
        try {
          if (known) await this.update(step, mapped, body, fp, known);
          else if (found?.by === 'own') await this.adoptOwn(step, mapped, body, fp, found.record);
          else if (found)
            await this.adopt(
              step,
              mapped,
              body,
              fp,
              found.record,
              found.by === 'name' ? 'update' : (step.match as MatchSpec).onMatch,
            );
          else return await this.create(step, mapped, body, fp, attempt);
        } catch (error) {
          if (!isRowLevel(error)) throw error;
          await this.reject(
            step,
            this.rejection(mapped, joinProblems(serviceProblems(error, step.prepared.mapping)), error.status),
          );
        }
        return null;
      });
      // Looked up outside the slot: the pause and the lookup hold up no other row's request.
      if (!lost || !(await this.settleLost(step, mapped, body, fp, lost, attempt.number))) return;
      attempt.number += 1;
    }
  }

  /**
   * The account's record for a new row under `match:`, null when it has none, or 'rejected' when
   * several records match. Rows sharing a match value were rejected (or folded) as they were read.
   */
  async lookUp(step: StepRun, mapped: MappedRecord, body: Body): Promise<Body | null | 'rejected'> {
    const matcher = step.matcher as Matcher;
    const spec = step.match as MatchSpec;
    const value = matcher.valueOf(body);
    if (value === null) return null;
    const outcome = judgeMatch(
      spec,
      value,
      await matcher.find(value),
      step.taken,
      step.prepared.mapping.onDuplicate,
      body,
    );
    if (outcome.kind === 'conflict') {
      await this.reject(
        step,
        this.rejection(mapped, { field: 'match', code: 'API_CONFLICT', message: outcome.message }, outcome.status),
      );
      return 'rejected';
    }
    if (outcome.kind === 'none') return null;
    // Taken as it is judged: rows looked up at once (onDuplicate: separate) each get another record.
    step.taken.add(outcome.record.id as number);
    return outcome.record;
  }

  /**
   * A new row whose record the account has already: reject, leave, or update it as `onMatch` says
   * (an organisation made by name earlier is updated).
   */
  async adopt(
    step: StepRun,
    mapped: MappedRecord,
    body: Body,
    fp: string,
    record: Body,
    onMatch: MatchSpec['onMatch'],
  ): Promise<void> {
    const id = record.id as number;
    step.taken.add(id);
    if (onMatch === 'update') await this.fillRecord(step, { key: mapped.key, record, body, fp, journalled: body });
    // A project's additional contacts are not read back: one this import created cannot be on the
    // project yet, and is added (as after a create); one found in the account is taken as there.
    const added = onMatch === 'update' ? contactIdsOf(body).filter((party) => this.createdParty(party)) : [];
    // With skip nothing of the row was written: the next run must not take the record for the row's.
    // With contacts to add, the row is recorded without them until they are, as after a create.
    const written = onMatch !== 'update' ? { body: {}, fp } : added.length > 0 ? apart(mapped, body, fp) : { body, fp };
    this.settleMatch(step, { key: mapped.key, id, ...written, origin: 'matched' });
    if (added.length > 0) await this.addContacts(step, { key: mapped.key, id, fp, body, contacts: added });
    return this.succeed(step, mapped, 'matched', id);
  }

  /**
   * A row whose record an earlier run made, though the journal lost it (--reconcile): the record
   * is the row's own again (a rollback of those runs cannot delete it, their line is lost; a
   * later run updates it as any other), and what the row holds now and the record lacks is written.
   */
  async adoptOwn(step: StepRun, mapped: MappedRecord, whole: Body, fp: string, record: Body): Promise<void> {
    const id = record.id as number;
    this.ctx.reconciled.applied += 1;
    // A note's files were sent with the lost create: the record has them already.
    const { attachments: _files, ...body } = withoutApart(whole);
    await this.fillRecord(step, { key: mapped.key, record, body, fp, journalled: whole });
    // Adding a contact the project has is no error.
    const contacts = contactIdsOf(whole);
    if (contacts.length > 0) await this.ctx.service.setContacts(id, contacts, []);
    this.settleMatch(step, { key: mapped.key, id, fp, body: whole, origin: 'created' });
    return this.succeed(step, mapped, 'matched', id);
  }

  /**
   * Writes what the account's `record` lacks of the row's `body`, its intent made durable first
   * (holding `journalled`, the row's body as the journal keeps it); nothing when it lacks nothing.
   */
  private async fillRecord(
    step: StepRun,
    fill: { key: string; record: Body; body: Body; fp: string; journalled: Body },
  ): Promise<void> {
    const id = fill.record.id as number;
    const { plan, before } = planRecordUpdate(fill.record, fill.body);
    if (Object.keys(plan.changes).length === 0) return;
    await this.ctx.journal(step, {
      t: 'intent',
      k: fill.key,
      op: 'update',
      run: this.ctx.runId,
      at: this.ctx.at(),
      fp: fill.fp,
      body: fill.journalled,
      id,
      before,
    });
    await this.ctx.service.update(step.compiled.entity, id, plan.changes);
  }

  /**
   * Adds a project's additional contacts, the row recorded without them until now (after a create,
   * or a match): the intent made durable first, then the contacts added, then the row's whole body
   * recorded as written.
   */
  private async addContacts(
    step: StepRun,
    add: { key: string; id: number; fp: string; body: Body; contacts: number[] },
  ): Promise<void> {
    const { key, id, fp, body } = add;
    const at = this.ctx.at();
    await this.ctx.journal(step, {
      t: 'intent',
      k: key,
      op: 'update',
      run: this.ctx.runId,
      at,
      fp,
      body,
      id,
      before: { parties: null },
    });
    await this.ctx.service.setContacts(id, add.contacts, []);
    this.ctx.record(step, { t: 'done', k: key, op: 'update', run: this.ctx.runId, at: this.ctx.at(), id, fp });
    this.ctx.fold(step, key, { fp, body });
  }

  /** The row's record is `id`, one the account had (`matched`) or the row's own again (`created`): recorded, and the step's state told. */
  private settleMatch(
    step: StepRun,
    match: { key: string; id: number; fp: string; body: Body; origin: 'matched' | 'created' },
  ): void {
    const { key, id, fp, body, origin } = match;
    this.ctx.record(step, {
      t: 'done',
      k: key,
      op: 'match',
      run: this.ctx.runId,
      at: this.ctx.at(),
      id,
      fp,
      body,
      origin,
    });
    this.ctx.fold(step, key, { id, fp, body, origin, pending: null, rejected: null, run: this.ctx.runId });
  }

  /** Whether a run of this state created party `id` (rather than found it in the account). */
  createdParty(id: number): boolean {
    for (const step of this.ctx.steps) {
      if (step.compiled.entity !== 'party') continue;
      for (const row of step.journal.rows.values()) if (row.id === id && row.origin === 'created') return true;
    }
    return false;
  }

  countDry(
    step: StepRun,
    mapped: MappedRecord,
    body: Body,
    known: (RowState & { id: number }) | null,
    found: Body | null,
  ): void {
    countWarnings(step.warnings, mapped.warnings);
    if (found) {
      this.ctx.dry.requests += step.match?.onMatch === 'update' ? 1 : 0;
      step.counts.matched += 1;
      step.settle(mapped.key, found.id as number);
      return;
    }
    const requests = known
      ? this.ctx.options.full || planUpdate(known.body ?? {}, body).needsCurrent
        ? 2
        : 1
      : 1 + mapped.attachments.length + contactIdsOf(body).length;
    this.ctx.dry.requests += requests;
    if (this.ctx.dry.samples.length < 3)
      this.ctx.dry.samples.push({ step: step.name, key: mapped.key, action: known ? 'update' : 'create', body });
    step.counts[known ? 'updated' : 'created'] += 1;
    // Rows that link to this one go on being counted; nothing is sent.
    step.settle(mapped.key, known ? known.id : 0);
  }

  /** Queues the intent of a create in the step's journal (see `write`). */
  announce(step: StepRun, mapped: MappedRecord, body: Body, fp: string): Announced {
    const at = this.ctx.at();
    return {
      at,
      line: this.ctx.stage(step, { t: 'intent', k: mapped.key, op: 'create', run: this.ctx.runId, at, fp, body }),
    };
  }

  /**
   * One attempt at a create. Returns what is needed to look the record up when the answer was
   * lost (the request was sent: it may have been applied), null when the row is settled.
   */
  async create(
    step: StepRun,
    mapped: MappedRecord,
    whole: Body,
    wholeFp: string,
    attempt: CreateAttempt,
  ): Promise<LostAnswer | null> {
    const entity = step.compiled.entity;
    const { body, fp } = apart(mapped, whole, wholeFp);
    const files = attachmentFilesOf(body);
    attempt.sent ??= files.length > 0 ? { ...body, attachments: await this.ctx.service.upload(files) } : body;
    // Durable before the request: a crash after it leaves an intent the next run looks up.
    const { at, line } = attempt.announced ?? this.announce(step, mapped, body, fp);
    attempt.announced = null;
    const writing = this.ctx.durable(step, line);
    if (writing) await writing;
    let id: number;
    const byName = linkedByName(entity, attempt.sent);
    let answer: Body | null = null;
    try {
      if (byName === undefined) id = await this.ctx.service.create(entity, attempt.sent);
      else ({ id } = answer = await this.ctx.service.createRecord(entity, attempt.sent));
    } catch (error) {
      if (error instanceof AmbiguousWriteError) return { at, error };
      // Refused or never sent: the intent is void.
      if (isRowLevel(error))
        await this.ctx.journal(step, { t: 'cancel', k: mapped.key, run: this.ctx.runId, at: this.ctx.at() });
      throw error;
    }
    await this.created(step, mapped, whole, wholeFp, id);
    if (byName !== undefined && answer !== null)
      await this.ctx.made.afterWrite(this.ctx.service, byName, answer, (made) => this.ownMade(step, byName, made));
    return null;
  }

  /**
   * An organisation the service made for a row's link by name: journalled in the row's step as a
   * record of its own (see made-by-name.ts), so that rollback deletes it and verify counts it.
   */
  async ownMade(step: StepRun, name: string, id: number): Promise<void> {
    const key = madeKey(name);
    const body = { type: 'organisation', name };
    const fp = fingerprint({ body, attachments: [] });
    await this.ctx.journal(step, {
      t: 'intent',
      k: key,
      op: 'create',
      run: this.ctx.runId,
      at: this.ctx.at(),
      fp,
      body,
    });
    this.ctx.record(step, {
      t: 'done',
      k: key,
      op: 'create',
      run: this.ctx.runId,
      at: this.ctx.at(),
      id,
      fp,
      origin: 'created',
    });
    this.ctx.fold(step, key, { id, fp, body, origin: 'created', pending: null, rejected: null, run: this.ctx.runId });
  }

  /**
   * The create is confirmed. A project's additional contacts are added after it, by requests of
   * their own: until they are, the journal holds the record without them, so that a run cut off
   * in between adds them on the next.
   */
  async created(step: StepRun, mapped: MappedRecord, whole: Body, wholeFp: string, id: number): Promise<void> {
    const { body, fp } = apart(mapped, whole, wholeFp);
    step.taken.add(id);
    this.ctx.record(step, {
      t: 'done',
      k: mapped.key,
      op: 'create',
      run: this.ctx.runId,
      at: this.ctx.at(),
      id,
      fp,
      origin: 'created',
    });
    this.ctx.fold(step, mapped.key, {
      id,
      fp,
      body,
      origin: 'created',
      pending: null,
      rejected: null,
      run: this.ctx.runId,
    });
    const contacts = contactIdsOf(whole);
    if (contacts.length > 0) await this.addContacts(step, { key: mapped.key, id, fp: wholeFp, body: whole, contacts });
    return this.succeed(step, mapped, 'created', id);
  }

  /**
   * A create whose answer was lost: after a pause, the record is looked up the way a resumed run
   * looks it up. Returns true when it was not applied and is to be sent again.
   */
  async settleLost(
    step: StepRun,
    mapped: MappedRecord,
    body: Body,
    fp: string,
    lost: LostAnswer,
    attempt: number,
  ): Promise<boolean> {
    step.lost ??= new LostCreates(this.ctx.service, step.compiled.entity, (candidate) => step.taken.has(candidate));
    const id = await step.lost.find({ key: mapped.key, body, at: lost.at }, attempt);
    if (id !== undefined) {
      this.ctx.reconciled.applied += 1;
      await this.created(step, mapped, body, fp, id);
      return false;
    }
    this.ctx.reconciled.notApplied += 1;
    await this.ctx.journal(step, { t: 'cancel', k: mapped.key, run: this.ctx.runId, at: this.ctx.at() });
    if (attempt < MAX_LOST_CREATES) return true;
    const message = `the service lost the answer to this create ${attempt} times, and it was not applied any of them (last: ${lost.error.message}); --retry-rejects sends it again`;
    await this.reject(
      step,
      this.rejection(mapped, { field: '', code: 'API_AMBIGUOUS_WRITE', message }, lost.error.status),
    );
    return false;
  }

  async update(
    step: StepRun,
    mapped: MappedRecord,
    body: Body,
    fp: string,
    prior: RowState & { id: number },
  ): Promise<void> {
    const entity = step.compiled.entity;
    const from = prior.body ?? {};
    let plan = planUpdate(from, body);
    let before: Body | null = null;
    const previous = attachmentFilesOf(prior.body);
    const files = attachmentFilesOf(body);
    const attachmentsChanged = canonicalJson(previous) !== canonicalJson(files);
    let current: Body | null = null;
    // --full compares with the record as the account has it now: values changed in the service are written again.
    if (plan.needsCurrent || this.ctx.options.full || attachmentsChanged) {
      current = await this.ctx.service.read(entity, prior.id);
      if (current === null) {
        throw new ApiError(
          'API_NOT_FOUND',
          `record ${prior.id}, written for this row by an earlier run, is no longer in the account`,
          {
            method: 'GET',
            path: `${this.ctx.service.urlOf(entity, prior.id)}`,
            status: 404,
            hint: 'Someone deleted it in the service. Run with --fresh into a new state folder to create it again.',
          },
        );
      }
      if (this.ctx.options.full) ({ plan, before } = planRecordUpdate(current, body));
      else plan = planUpdate(from, body, current);
    }
    if (attachmentsChanged) {
      const delta = planAttachments(previous, files, current);
      if (delta.add.length + delta.remove.length > 0)
        plan.changes.attachments = [
          ...(await this.ctx.service.upload(delta.add)),
          ...delta.remove.map((id) => ({ id, _delete: true })),
        ];
    }
    const contacts = planContacts(prior.body, body);
    // Contacts an interrupted run was adding: those it added are found in one list (100 a page)
    // rather than each added again, when that saves requests.
    if (step.contactsUnsure.delete(mapped.key) && contacts.add.length > 1) {
      const present = new Set<number>();
      for await (const party of this.ctx.service.contactsOf(prior.id)) present.add(party);
      contacts.add = contacts.add.filter((party) => !present.has(party));
    }
    const changed = Object.keys(plan.changes).length + contacts.add.length + contacts.remove.length > 0;
    if (changed) {
      await this.ctx.journal(step, {
        t: 'intent',
        k: mapped.key,
        op: 'update',
        run: this.ctx.runId,
        at: this.ctx.at(),
        fp,
        body,
        id: prior.id,
        before: before ?? beforeImage(from, plan.changes),
      });
      if (Object.keys(plan.changes).length > 0) await this.ctx.service.update(entity, prior.id, plan.changes);
      if (contacts.add.length + contacts.remove.length > 0)
        await this.ctx.service.setContacts(prior.id, contacts.add, contacts.remove);
    }
    this.ctx.record(step, {
      t: 'done',
      k: mapped.key,
      op: 'update',
      run: this.ctx.runId,
      at: this.ctx.at(),
      id: prior.id,
      fp,
    });
    this.ctx.fold(step, mapped.key, { fp, body, pending: null, rejected: null, run: this.ctx.runId });
    return this.succeed(step, mapped, changed ? 'updated' : 'unchanged', prior.id);
  }
}
