/**
 * The importer's part that runs a plan or a mapping: prepares the steps (set-up, journals,
 * matchers), settles the writes an earlier run left without an answer, reads each step's rows and
 * hands them to the record sender (record-sender.ts) as their links allow, all of them sharing one
 * run context (run-context.ts), then deals with the rows gone from the input, finishes the result files and sums up.
 */
import { readdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { FerryError } from '../errors/index.ts';
import type { JournalEntry, RowState } from '../journal/index.ts';
import { type CompiledMapping, type NameResolver } from '../mapping/index.ts';
import {
  assertConstantNames,
  countStepItems,
  createMatcher,
  linkedSteps,
  MATCH_BATCH,
  type Matcher,
  narrowNotCarried,
  openStepItems,
  readsLive,
  withType,
} from '../plan/index.ts';
import { openRun } from './open-run.ts';
import { removeV1Spools } from '../sources/index.ts';
import { RecordSender } from './record-sender.ts';
import { RunContext } from './run-context.ts';
import { RowWindow } from './row-window.ts';
import type { RecordService } from '../client/index.ts';
import { findCreated } from './lost-creates.ts';
import { isMadeKey } from './made-by-name.ts';
import type { SetupReport } from './setup-plan.ts';
import { setupForRun } from './setup.ts';
import {
  type DryRunReport,
  importOptionsSchema,
  type ImportDeps,
  type ImportOptions,
  type ImportOptionsInput,
  type ImportSummary,
} from './import-options.ts';
import { StepRun, assertSameKey } from './step-run.ts';

export * from './import-options.ts';
export { assertSameKey } from './step-run.ts';

/** Result files of a run that was killed before it could rename or remove them. */
async function removeStaleTemps(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(
    names
      .filter((name) => name.startsWith('.') && name.endsWith('.tmp'))
      .map((name) => rm(join(dir, name), { force: true })),
  );
}

/** Drops the spools of live steps' reads; a spool left behind would be read instead of the account. */
async function removeSpools(dir: string): Promise<void> {
  try {
    await removeV1Spools(dir);
  } catch (error) {
    throw new FerryError('JOURNAL_WRITE', `cannot remove the spools in ${dir}: ${(error as Error).message}`, {
      location: { file: dir },
      cause: error,
      hint: "Delete them by hand before the next run, which would otherwise read the old account's records from them rather than from the account.",
    });
  }
}

/**
 * A dry run's figure, made the run's: the rows' writes it counted, plus what it sent itself (the
 * names, look-ups of `match:`), which the run sends too, plus the creates its set-up would send.
 */
function countDryRun(
  dry: DryRunReport,
  sent: { all: number; names: number; lookUps: number },
  setup: SetupReport | null,
  steps: readonly StepRun[],
  limitPerHour: number | null,
): void {
  dry.requestsForNames = sent.names;
  dry.requestsForSetup = setup?.create.length ?? 0;
  dry.lookUps = sent.lookUps;
  dry.lookUpValues = steps.reduce((sum, step) => sum + (step.matcher?.values ?? 0), 0);
  dry.requests += sent.all + dry.requestsForSetup;
  dry.limitPerHour = limitPerHour;
  dry.estimatedSeconds = limitPerHour ? Math.ceil((dry.requests / limitPerHour) * 3600) : null;
}

/**
 * The matcher of a step whose mapping says `match:`; a custom field must exist in the account. Its
 * look-ups wait to share a query while more values are coming before the writes need them: the
 * reader is reading rows (not held by the window), a query is under way (its answers let rows on and
 * more be read), or the step has rows enough with their answers to keep every write slot busy for
 * two rounds, so that a query sent then is answered before they are written.
 */
function matcherFor(
  step: StepRun,
  service: RecordService,
  resolver: NameResolver,
  options: Pick<ImportOptions, 'concurrency' | 'matchFromListUpTo'>,
): Matcher | null {
  const matcher = createMatcher(service, step.compiled.entity, step.match, resolver, step.prepared.mappingFile, {
    busy: () => step.reading || step.ready >= 2 * options.concurrency || matcher?.querying === true,
    listUpTo: options.matchFromListUpTo,
  });
  return matcher;
}

/** Rows read ahead of the writes, per step: bounds memory while rows wait for their links. */
const WINDOW_PER_SLOT = 4;

/**
 * How many rows of a step may be under way at once. A step with `match:` reads a full query of
 * look-ups further ahead, so that the values of rows not yet written fill a query while the rows
 * whose answers are in keep the writes busy.
 */
function windowOf(step: StepRun, concurrency: number): number {
  return concurrency * WINDOW_PER_SLOT + (step.matcher ? MATCH_BATCH : 0);
}

/**
 * Writes the rows of a mapping or a plan into the account, exactly once across interruptions.
 *
 * Every write is preceded by a durable intent in the step's journal and followed by its result,
 * so a re-run knows what was written (skipped without a request when unchanged, updated field by
 * field when changed) and what may have been (looked up in the account before anything is sent
 * again). Rows wait only for the records they link to; the steps of a plan run side by side.
 */
export async function runImport(input: ImportOptionsInput, deps: ImportDeps): Promise<ImportSummary> {
  const options = importOptionsSchema.parse(input);
  // The rows of a rejects file are rejected rows: the plan's other steps take theirs too.
  if (options.retryFile !== null) options.retryRejects = true;
  const now = deps.now ?? (() => new Date());
  const started = Date.now();
  const requestsAtStart = deps.client.transport.requestsSent;
  const emit = deps.onEvent ?? (() => undefined);

  const source = options.source;
  const {
    plan,
    steps: prepared,
    compiled,
    names,
    state,
  } = await openRun(
    {
      source,
      prepare: {
        retryFile: options.retryFile,
        transforms: deps.transforms,
        live: { connection: deps.v1Live },
        checkPlan: (loaded) => {
          if (options.strict && !loaded?.setup) {
            throw new FerryError('USAGE', "--strict checks the account against a plan's `setup:`; this run has none", {
              hint: 'Add `setup:` to the plan (it may be empty: then it creates what the rows name), or leave out --strict.',
            });
          }
        },
      },
      // All of them for the set-up, which starts from the same names (it creates what the rows
      // name and the account lacks), and for a caller that keeps them for its next runs
      // (`onCatalog`); otherwise only the lists the mappings can name.
      allNames: (loaded) => Boolean(loaded?.setup) || deps.onCatalog !== undefined,
      // The account's users are checked as the state is bound; a dry run leaves the state as it was.
      state: {
        dir: options.stateDir,
        account: deps.account,
        fresh: options.fresh,
        keepUsers: !options.dryRun,
        store: options.stateStore ?? undefined,
      },
    },
    deps,
  );
  const { catalog } = names;
  let resolver = names.resolver;
  const requestsForNames = names.requests;
  const steps: StepRun[] = [];
  try {
    await removeStaleTemps(dirname(state.resultFile(prepared[0]?.name ?? 'step', 'success')));
    const run = state.newRunId();
    // A live step's reads spool what they fetch in the state: the set-up's read fills the spool and
    // the run reads it back, and a run going on after an interruption reads live from the recorded page.
    const spools = state.spoolDir(options.dryRun);
    for (const step of prepared) if (readsLive(step)) step.spool = spools;
    // A dry run's spools serve that run only: the state is left as it was.
    if (options.dryRun) await removeSpools(spools);
    // What the state's steps were written from: a plan, a mapping file, or the name of rows handed in.
    const sourceFile =
      source.kind === 'plan'
        ? resolve(source.planFile)
        : source.kind === 'mapping'
          ? resolve(source.mappingFile)
          : typeof source.mapping === 'string'
            ? resolve(source.mapping)
            : source.name;
    // Bound before the set-up writes: a state another plan wrote (or a rollback left half done) is refused first.
    await state.bindSteps(
      prepared.map((step, i) => ({
        name: step.name,
        entity: (compiled[i] as CompiledMapping).entity,
        source: sourceFile,
      })),
      !options.dryRun,
    );
    // The plan's set-up comes first: what it creates must resolve for the rows, constants included.
    let setup: SetupReport | null = null;
    const beforeSetup = deps.client.transport.requestsSent;
    if (plan?.setup) {
      const done = await setupForRun(
        {
          spec: plan.setup,
          steps: prepared,
          compiled,
          dryRun: options.dryRun,
          strict: options.strict,
          catalog,
          ...(deps.signal ? { signal: deps.signal } : {}),
          onPlan: (p) => emit({ type: 'setup', plan: p }),
        },
        { client: deps.client, state, run, now, reconcile: options.reconcile },
      );
      setup = done.report;
      if (done.resolver && !deps.resolver) resolver = done.resolver;
      deps.onCatalog?.(done.catalog);
    } else if (catalog) deps.onCatalog?.(catalog);
    const requestsForSetup = deps.client.transport.requestsSent - beforeSetup;
    for (const step of prepared) assertConstantNames(step, resolver);
    const linked = linkedSteps(prepared);
    for (const [index, step] of prepared.entries()) {
      // A journal that is not what its runs wrote is refused, unless --reconcile looks the rows up.
      const journal = await state.loadJournal(step.name, { trustAsItIs: options.reconcile });
      assertSameKey(step, journal);
      const writer = options.dryRun ? null : await state.openJournal(step.name, journal);
      steps.push(new StepRun(step, compiled[index] as CompiledMapping, journal, writer, linked.has(step.name)));
    }
    const engine = new ImportEngine(new RunContext({ options, deps, state, steps, resolver, runId: run, now, emit }));
    for (const step of steps) step.matcher = matcherFor(step, engine.ctx.service, resolver, options);
    emit({ type: 'start', run, stateDir: state.dir, steps: steps.map((s) => s.name), dryRun: options.dryRun });
    const beforeRows = deps.client.transport.requestsSent;
    const summary = await engine.run();
    narrowNotCarried(summary.steps, compiled);
    // A dry run's rows send only their look-ups.
    const lookUps = deps.client.transport.requestsSent - beforeRows;
    // A finished run (every row read and handed on, rejected ones included) drops its spools: the
    // next run is a new read of the account (a delta sync, a retry of records fixed there). An
    // interrupted or stopped run, or one cut by --limit, keeps them to go on from.
    if (options.dryRun || (!summary.interrupted && summary.stopped === null && steps.every((step) => step.readAll)))
      await removeSpools(spools);
    summary.setup = setup;
    summary.elapsedMs = Date.now() - started;
    summary.requests = deps.client.transport.requestsSent - requestsAtStart;
    summary.requestsForNames = requestsForNames;
    summary.requestsForSetup = requestsForSetup;
    if (summary.dryRun)
      countDryRun(
        summary.dryRun,
        { all: summary.requests, names: requestsForNames, lookUps },
        setup,
        steps,
        deps.client.transport.governor.state().limitPerHour,
      );
    emit({ type: 'end', summary });
    return summary;
  } finally {
    for (const step of steps) {
      await step.writer?.close().catch(() => undefined);
      await (await step.success?.catch(() => null))?.abort().catch(() => undefined);
      await (await step.rejects?.catch(() => null))?.abort().catch(() => undefined);
    }
    await state.close();
  }
}

/** Runs the steps of one run: reconcile, the rows of each step as their links allow, the rows gone, the results. */
class ImportEngine {
  readonly sender: RecordSender;

  constructor(readonly ctx: RunContext) {
    this.sender = new RecordSender(ctx);
  }

  async run(): Promise<ImportSummary> {
    const every = this.ctx.deps.progressEveryMs ?? 1000;
    const timer = setInterval(() => this.progress(), every);
    timer.unref();
    // The rows are counted for a run that lasts long enough to show its progress, halfway to the
    // first progress event: counting reads every input once more, a fourteenth of the CPU of a
    // run of 2,000 rows that is over before anyone would see the total.
    const counting = this.ctx.deps.onEvent ? setTimeout(() => this.countRows(), every / 2) : null;
    counting?.unref();
    try {
      for (const step of this.ctx.steps)
        await this.ctx.journal(step, {
          t: 'run',
          run: this.ctx.runId,
          at: this.ctx.at(),
          event: 'start',
          key: JSON.stringify(step.prepared.mapping.key),
        });
      await this.reconcile();
      if (!this.ctx.halt.signal.aborted)
        await Promise.all(this.ctx.steps.map((step) => this.runStep(step).catch((error) => this.ctx.fail(error))));
      if (!this.ctx.halt.signal.aborted) await this.missingRows();
      // A result file that cannot be written (a full disk) stops the run like any failure: the
      // summary still says how far it got, and the journal holds what was written.
      await this.finishResults().catch((error) => this.ctx.fail(error));
      const event = this.ctx.stopped || this.ctx.interrupted ? 'interrupted' : 'end';
      for (const step of this.ctx.steps) {
        const end: JournalEntry = { t: 'run', run: this.ctx.runId, at: this.ctx.at(), event };
        if (step.readAll && !this.ctx.halt.signal.aborted) end.unread = step.unread;
        await this.ctx.journal(step, end).catch(() => undefined);
      }
      for (const step of this.ctx.steps) await step.writer?.flush().catch((error: unknown) => this.ctx.fail(error));
    } finally {
      clearInterval(timer);
      if (counting) clearTimeout(counting);
      this.ctx.unlisten();
      this.ctx.counting.abort();
    }
    return {
      run: this.ctx.runId,
      stateDir: this.ctx.state.dir,
      steps: this.ctx.steps.map((s) => ({
        step: s.name,
        inputFile: s.prepared.inputFile,
        mappingFile: s.prepared.mappingFile,
        ...s.counts,
        successFile: s.success ? this.ctx.state.resultFile(s.name, 'success') : null,
        rejectsFile: s.rejects ? this.ctx.rejectsFile(s) : null,
        warnings: s.warnings,
        notCarried: s.notCarried,
        reasons: s.reasons.sorted(),
      })),
      requests: 0,
      requestsForNames: 0,
      requestsForSetup: 0,
      elapsedMs: 0,
      interrupted: this.ctx.interrupted,
      stopped: this.ctx.stopped,
      reconciled: this.ctx.reconciled,
      limited:
        this.ctx.options.limit !== null &&
        this.ctx.steps.some((s) => s.counts.rowsRead >= (this.ctx.options.limit as number) && !s.readAll),
      retryRejects: this.ctx.options.retryRejects,
      dryRun: this.ctx.options.dryRun ? this.ctx.dry : null,
      setup: null,
    };
  }

  /** Counts each step's rows beside the run, for the progress display; a failed count only leaves the total unknown. */
  countRows(): void {
    for (const step of this.ctx.steps) {
      // A live step is counted from its spool once that holds the whole list (a plan's set-up read
      // it), never by reading the old account again: until then its total stays unknown.
      countStepItems(step.prepared, this.ctx.counting.signal)
        .then(
          (count) => (step.total = this.ctx.options.limit === null ? count : Math.min(count, this.ctx.options.limit)),
        )
        .catch(() => undefined);
    }
  }

  progress(): void {
    this.ctx.emit({
      type: 'progress',
      steps: this.ctx.steps.map((s) => ({ step: s.name, total: s.total, ...s.counts })),
      requests: this.ctx.deps.client.transport.requestsSent - this.ctx.requestsAtStart,
      elapsedMs: Date.now() - this.ctx.started,
      governor: this.ctx.deps.client.transport.governor.state(),
      waits: [
        ...this.ctx.deps.client.transport.waits().map((wait) => ({ ...wait, of: 'account' as const })),
        ...(this.ctx.deps.v1Live?.waits() ?? []).map((wait) => ({ ...wait, of: 'old account' as const })),
      ],
    });
  }

  // -------------------------------------------------------------------------------------------
  // Writes whose answer never came, from an earlier run that was cut off.

  async reconcile(): Promise<void> {
    for (const step of this.ctx.steps) {
      // Taken out first: settling a row clears its pending intent in place.
      const pending = [...step.journal.rows.pendingRows()].flatMap((row) =>
        row.pending ? [{ key: row.key, intent: row.pending }] : [],
      );
      if (pending.length === 0 || this.ctx.options.dryRun) continue;
      const creates = pending.filter((p) => p.intent.op === 'create');
      const entity = step.compiled.entity;
      const found = await findCreated(
        this.ctx.service,
        entity,
        creates.map((p) => ({ key: p.key, body: withType(entity, p.intent.body ?? {}), at: p.intent.at })),
        (id) => step.taken.has(id),
      );
      for (const { key, intent } of pending) {
        if (intent.op === 'create') {
          const id = found.get(key);
          if (id !== undefined) {
            step.taken.add(id);
            this.ctx.reconciled.applied += 1;
            await this.ctx.journal(step, {
              t: 'done',
              k: key,
              op: 'create',
              run: intent.run,
              at: this.ctx.at(),
              id,
              fp: intent.fp,
              origin: 'created',
            });
            this.ctx.fold(step, key, {
              id,
              fp: intent.fp,
              body: intent.body ?? null,
              origin: 'created',
              pending: null,
            });
          } else {
            this.ctx.reconciled.notApplied += 1;
            await this.ctx.journal(step, { t: 'cancel', k: key, run: this.ctx.runId, at: this.ctx.at() });
            this.ctx.fold(step, key, { pending: null });
          }
          continue;
        }
        if (intent.op === 'delete' && intent.id !== undefined) {
          // Deleting again is harmless: gone is gone.
          await this.ctx.service.remove(entity, intent.id);
          await this.ctx.journal(step, {
            t: 'done',
            k: key,
            op: 'delete',
            run: intent.run,
            at: this.ctx.at(),
            id: intent.id,
            fp: intent.fp,
          });
          this.ctx.fold(step, key, { id: null, pending: null });
          this.ctx.reconciled.applied += 1;
          continue;
        }
        // An update may or may not have been applied; the row is compared again and the update
        // sent again if it still differs (an update is safe to repeat).
        if (intent.before && 'parties' in intent.before) step.contactsUnsure.add(key);
        await this.ctx.journal(step, { t: 'cancel', k: key, run: this.ctx.runId, at: this.ctx.at() });
        this.ctx.fold(step, key, { pending: null });
        this.ctx.reconciled.notApplied += 1;
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // Rows.

  async runStep(step: StepRun): Promise<void> {
    const opened = await openStepItems(step.prepared, step.compiled, this.ctx.halt.signal);
    if (!opened) {
      step.finish();
      return;
    }
    step.header = opened.header;
    const window = new RowWindow(windowOf(step, this.ctx.options.concurrency));
    // Held look-ups wait while the reader reads: each stop of it lets them be looked at again.
    const pause = (reading: boolean): void => {
      step.reading = reading;
      if (!reading) step.matcher?.release();
    };
    pause(true);
    try {
      let cut = false;
      for await (const item of opened.items) {
        if (
          this.ctx.halt.signal.aborted ||
          (this.ctx.options.limit !== null && step.counts.rowsRead >= this.ctx.options.limit)
        ) {
          cut = true;
          break;
        }
        step.counts.rowsRead += 1;
        const outcome = step.checks.check(item);
        if (outcome.kind === 'skipped') {
          step.counts.skipped += 1;
          this.ctx.emit({ type: 'row', step: step.name, row: item.location.row, key: null, action: 'skipped' });
          continue;
        }
        if (outcome.kind === 'folded' || outcome.kind === 'repeated') {
          // Folded into an earlier row of its record (onDuplicate), or that record named again:
          // written once, by that row; a folded row's key stands for that row's record.
          step.counts.repeated += 1;
          if (outcome.kind === 'folded') step.alias(outcome.key, outcome.into);
          this.ctx.emit({
            type: 'row',
            step: step.name,
            row: item.location.row,
            key: outcome.kind === 'folded' ? outcome.key : outcome.mapped.key,
            action: 'repeated',
          });
          continue;
        }
        if (outcome.kind === 'rejected') {
          // Still in the input, though refused: its record (if an earlier run wrote one) is not
          // "missing"; a row that could not be read at all is counted for the journal's run end.
          if (!outcome.rejected.key) step.unread += 1;
          await this.sender.reject(step, outcome.rejected, outcome.own);
          continue;
        }
        const mapped = outcome.mapped;
        const prior = step.journal.rows.get(mapped.key);
        // A row that could not be read had no key to journal its reject under: once it can be
        // read, it is a row the journal has never seen.
        const fixedUnread = prior === undefined && step.journal.unread > 0;
        if (this.ctx.options.retryRejects && !prior?.rejected && !fixedUnread && !step.prepared.fromRejects) {
          // Not a rejected row: left as it is, but rows that link to it still find its record.
          step.settleUnwritten(mapped.key);
          continue;
        }
        const key = mapped.key;
        window.add(
          this.sender.processRecord(step, mapped).catch((error) => {
            if (this.ctx.halt.signal.aborted && error instanceof Error && error.name === 'AbortError')
              step.counts.notReached += 1;
            this.ctx.fail(error);
            step.settleUnwritten(key);
          }),
        );
        if (window.full) {
          pause(false);
          await window.room();
          pause(true);
        }
      }
      step.readAll = !cut && !this.ctx.halt.signal.aborted;
      if (step.readAll) step.notCarried = opened.census.result();
    } finally {
      pause(false);
      await window.drained();
      step.finish();
    }
  }

  // -------------------------------------------------------------------------------------------
  // Rows gone from the input.

  async missingRows(): Promise<void> {
    // A partial read says nothing about what is missing.
    if (this.ctx.options.limit !== null || this.ctx.options.retryRejects) return;
    for (const step of [...this.ctx.steps].reverse()) {
      // A rejects file fed back holds the rows to fix, not the whole input; a live read --since, only what changed.
      if (step.prepared.fromRejects || (readsLive(step.prepared) && step.prepared.live?.since !== undefined)) continue;
      // An organisation made by name is no row of the input: it is never missing from it.
      // A walk, not a list of every row: on a re-run of a million rows only the few gone are kept.
      const gone: RowState[] = [];
      for (const row of step.journal.rows.values())
        if (row.id !== null && !step.seen.has(row.key) && !isMadeKey(row.key)) gone.push(row);
      step.counts.missing = gone.length;
      if (this.ctx.options.dryRun) continue;
      const entity = step.compiled.entity;
      if (!this.ctx.options.deleteMissing) {
        // Kept, and listed in the success file so that a person can see which.
        for (const row of gone) await this.sender.writeSuccess(step, 0, row.key, 'missing', row.id as number);
        continue;
      }
      await Promise.all(
        gone.map((row) =>
          this.ctx.slots
            .run(async () => {
              if (this.ctx.halt.signal.aborted || row.id === null) return;
              await this.ctx.journal(step, {
                t: 'intent',
                k: row.key,
                op: 'delete',
                run: this.ctx.runId,
                at: this.ctx.at(),
                fp: row.fp ?? '',
                id: row.id,
                ...(row.body ? { before: row.body } : {}),
              });
              await this.ctx.service.remove(entity, row.id);
              this.ctx.record(step, {
                t: 'done',
                k: row.key,
                op: 'delete',
                run: this.ctx.runId,
                at: this.ctx.at(),
                id: row.id,
                fp: row.fp ?? '',
              });
              step.counts.deleted += 1;
              step.counts.missing -= 1;
              await this.sender.writeSuccess(step, 0, row.key, 'deleted', row.id);
            })
            .catch((error) => this.ctx.fail(error)),
        ),
      );
    }
  }

  /** The result files are the last run's: a file this run did not write is an earlier run's, and goes. */
  async finishResults(): Promise<void> {
    for (const step of this.ctx.steps) {
      if (step.success) await (await step.success).commit();
      else if (!this.ctx.options.dryRun) await rm(this.ctx.state.resultFile(step.name, 'success'), { force: true });
      if (step.rejects) await (await step.rejects).commit();
      else await rm(this.ctx.rejectsFile(step), { force: true });
    }
  }
}
