/**
 * What the workbench's views do, through the engine the command line uses: `inspect`'s reader,
 * `mapping init`'s draft and the ready-made mappings, `validate --online` and the dry run,
 * `runImport`, `runVerify` and `runRollback`, on the plan and the state folder in the project
 * folder. Nothing here keeps state of its own beyond what a page is shown: whatever the workbench
 * did, `crm-ferry run plan.yaml` goes on from it.
 */
import { open, readFile, rm, stat } from 'node:fs/promises';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { basename, join } from 'node:path';
import {
  type AccountCatalog,
  type CrmClient,
  readAccountCatalog,
  RecordService,
  v1LiveConnection,
  type V1LiveConnection,
} from '../client/index.ts';
import { FerryError } from '../errors/index.ts';
import type { AccountIdentity, StateStoreOptions } from '../journal/index.ts';
import type { ImportEvent, ImportSummary, RollbackSummary } from '../load/index.ts';
import type { UsageRecorder } from '../report/index.ts';
import type { VerifySummary } from '../verify/index.ts';
import {
  compileMapping,
  createResolver,
  draftMapping,
  findReadyMapping,
  loadMapping,
  type Mapping,
  offlineResolver,
  type NameResolver,
  parseMapping,
  TRANSFORMS,
  WARNING_CODES,
} from '../mapping/index.ts';
import { ReferenceBook } from '../plan/index.ts';
import { printable, writeFileAtomic } from '../util/index.ts';
import type {
  AccountView,
  CheckStepView,
  CheckView,
  InspectView,
  LatestRunView,
  MapRequest,
  MapView,
  ProgressPoint,
  RunOutcome,
  RunProgress,
  SaveRequest,
  SaveResult,
  StepProgress,
  UndoPreview,
  UndoResult,
  VerifyView,
  YamlProblem,
} from './api.ts';
import type { JobContext } from './jobs.ts';
import { applyEdit, parseEdit } from './map-edit.ts';
import { entityOf, looseParse, targetChoices } from './map-entries.ts';
import { previewRows, readSample, readStepKeys, samplesOf, type StepKeys } from './map-preview.ts';
import { matchChoices, tableOf, yamlProblems } from './map-table.ts';
import { PLAN_FILE, type PlanStepFile, Project, shownName, stepNameFor } from './project.ts';
import { latestRun, rejectsOf } from './latest-run.ts';
import { forPage, warningKind } from './reasons.ts';

/**
 * Where a check writes its rejects and warnings files (customer rows): inside the state folder,
 * not at the top of the customer's folder beside their files.
 */
export const CHECK_DIR = 'check';

/**
 * The command line's own words for what a run, a verify and a rollback did, handed in by the
 * command (the rooms below the command line never import it), so that the page says what
 * `crm-ferry run`, `verify` and `rollback` print.
 */
export interface EngineWords {
  /** The closing line of a run's summary. */
  runOutcome(summary: ImportSummary, cwd: string, liveReads: number): string;
  /** A rollback's summary, a line each (`dryRun`: what it would do). */
  rollbackLines(summary: RollbackSummary, dryRun: boolean): string[];
  /** Verify's closing line. */
  verifyOutcome(summary: VerifySummary): string;
  /** Starts sampling the requests and quota for the report's chart. */
  recordUsage(client: CrmClient): Promise<UsageRecorder>;
  /** A path as the report shows it, relative to `cwd`. */
  shownPath(path: string, cwd: string): string;
}

/** Where the engine writes and who to. */
export interface EngineDeps {
  words: EngineWords;
  project: Project;
  client: CrmClient;
  account: AccountIdentity;
  accountView: AccountView;
  /** CRM_FERRY_V1_TOKEN, for plans that read a live legacy account, as the command line reads it. */
  v1Token: string | undefined;
  version: string;
  /** How often a run reports progress, in ms. @default 500 */
  progressEveryMs?: number;
  /** Bytes all uploads under way may hold together. @default UPLOAD_TOTAL_BYTES */
  uploadLimitBytes?: number;
  /** Where the runs keep their state besides the project's state folder (`--state-store`). @default the folder alone */
  stateStore?: StateStoreOptions | null;
}

const FIELD_ENTITY = { party: 'parties', kase: 'kases', opportunity: 'opportunities' } as const;

/** What a run's counts are, for the page. */
function stepProgress(
  steps: Array<{
    step: string;
    total?: number | null;
    rowsRead: number;
    created: number;
    updated: number;
    unchanged: number;
    rejected: number;
    skipped: number;
    repeated: number;
  }>,
): StepProgress[] {
  return steps.map((s) => ({
    step: s.step,
    total: s.total ?? null,
    rowsRead: s.rowsRead,
    created: s.created,
    updated: s.updated,
    unchanged: s.unchanged,
    rejected: s.rejected,
    skipped: s.skipped,
    repeated: s.repeated,
  }));
}

/**
 * Bytes all uploads under way may hold together: one file of that size, or several smaller ones
 * at once. A larger file is copied into the folder by hand.
 */
export const UPLOAD_TOTAL_BYTES = 256 * 1024 * 1024;

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / 1024 / 1024)} MiB` : `${bytes} bytes`;
}

/** Characters an upload's name may not hold: controls, line and format characters, and markup. */
const UNSHOWABLE_NAME = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}<>&"'`]/u;

function uploadTooLarge(limit: number): FerryError {
  return new FerryError(
    'USAGE',
    `the uploads under way would pass ${formatBytes(limit)} together; nothing of this one was kept`,
    {
      hint: 'Wait for the other uploads to finish, or copy a large file into the project folder yourself: the workbench lists it as it is.',
    },
  );
}

export class Engine {
  /** Bytes of the uploads under way (declared, or received when more). */
  #uploading = 0;
  #catalog: Promise<AccountCatalog> | null = null;
  #verifyReport: string | null = null;
  /** The runs this workbench started: the latest run shown says whether it was one of them. */
  readonly #pageRuns = new Set<string>();
  readonly #stepKeys = new Map<string, { stamp: string; keys: Promise<StepKeys> }>();

  constructor(private readonly deps: EngineDeps) {}

  get project(): Project {
    return this.deps.project;
  }

  get planFile(): string {
    return this.deps.project.planFile;
  }

  /** The account's names, read once (a check reads them again). */
  private catalog(): Promise<AccountCatalog> {
    this.#catalog ??= readAccountCatalog(this.deps.client).catch((error: unknown) => {
      this.#catalog = null;
      throw error;
    });
    return this.#catalog;
  }

  /** The account's resolver for the preview; without an account, names are not checked. */
  private async resolver(): Promise<{ resolver: NameResolver; catalog: AccountCatalog | null }> {
    if (this.deps.accountView.problem !== null) return { resolver: offlineResolver, catalog: null };
    try {
      const catalog = await this.catalog();
      return { resolver: createResolver(catalog), catalog };
    } catch {
      return { resolver: offlineResolver, catalog: null };
    }
  }

  // -------------------------------------------------------------------------------------------
  // Files

  async inspect(name: string): Promise<InspectView> {
    const path = await this.project.inside(name, 'input file');
    const { inspectSource } = await import('../sources/index.ts');
    const report = await inspectSource(path);
    return {
      name,
      format: `${report.format} (${report.formatReason})`,
      encoding: report.encoding === undefined ? null : `${report.encoding}${report.bom ? ' with BOM' : ''}`,
      delimiter: report.delimiter === undefined ? null : report.delimiter === '\t' ? 'tab' : report.delimiter,
      sheets: report.sheets ?? null,
      rows: report.rowCount,
      rowErrors: report.errorCount,
      columns: report.columns.map((c) => ({ name: c.name, fillRate: c.fillRate, samples: c.samples })),
      findings: report.findings.map((f) => ({ code: f.code, message: forPage(f.message) })),
      notes: [
        ...report.warnings.map((w) => `row ${w.row}: ${forPage(w.message)}`),
        ...report.errors.map((e) => `row ${e.row}: ${forPage(e.message)}`),
      ],
    };
  }

  /** Adds an input file by upload: a new name in the folder, never over a file there. */
  async upload(name: string, body: Readable, declaredBytes: number | null): Promise<string> {
    const plain = basename(name);
    if (plain !== name || plain.startsWith('.') || !/\.(csv|tsv|txt|xlsx|xml|json)$/i.test(plain)) {
      throw new FerryError(
        'USAGE',
        `an upload is a CSV, XLSX or legacy export file with a plain name, got ${JSON.stringify(printable(name))}`,
      );
    }
    // The name is shown on the page and in file lists: printable characters only, and nothing a
    // page or a terminal could take for markup or a control.
    if (UNSHOWABLE_NAME.test(plain)) {
      throw new FerryError(
        'USAGE',
        `an upload's name holds a control character or one of < > & " ' \`: ${JSON.stringify(printable(plain))}`,
        { hint: 'Rename the file to letters, digits, spaces and - _ . ( ) before adding it.' },
      );
    }
    // Every upload under way counts against one limit, declared sizes first: four large files
    // sent at once cannot take the disk (or, before uploads were streamed, the memory) together.
    const cap = this.deps.uploadLimitBytes ?? UPLOAD_TOTAL_BYTES;
    const reserved = declaredBytes ?? 0;
    if (this.#uploading + reserved > cap) throw uploadTooLarge(cap);
    this.#uploading += reserved;
    let counted = 0;
    const path = await this.project.inside(plain, 'upload').catch((error: unknown) => {
      this.#uploading -= reserved;
      throw error;
    });
    let created = false;
    try {
      const handle = await open(path, 'wx', 0o600);
      created = true;
      const limit = new Transform({
        transform: (chunk: Buffer, _encoding, done) => {
          counted += chunk.length;
          // Past what was declared, the extra bytes count too.
          if (counted > reserved) this.#uploading += Math.min(chunk.length, counted - reserved);
          if (this.#uploading > cap) done(uploadTooLarge(cap));
          else done(null, chunk);
        },
      });
      await pipeline(body, limit, handle.createWriteStream());
    } catch (error) {
      if (created) await rm(path, { force: true });
      if ((error as NodeJS.ErrnoException).code === 'EEXIST')
        throw new FerryError('USAGE', `${plain} is in the folder already; nothing was written`, {
          hint: 'Rename the file before adding it.',
        });
      throw error;
    } finally {
      this.#uploading -= Math.max(reserved, counted);
    }
    return plain;
  }

  // -------------------------------------------------------------------------------------------
  // Map

  /** The step and mapping file of an input: the plan's, or new names beside it. */
  private async stepOf(input: string): Promise<{ step: string; mappingFile: string; saved: boolean }> {
    const steps = await this.project.planSteps();
    const found = steps.find((s) => s.input === input);
    if (found) return { step: found.name, mappingFile: found.mapping, saved: true };
    let step = stepNameFor(input);
    for (let n = 2; steps.some((s) => s.name === step); n += 1) step = `${stepNameFor(input)}-${n}`;
    return { step, mappingFile: this.project.mappingNameFor(input), saved: false };
  }

  async mapView(request: MapRequest): Promise<MapView> {
    const inputPath = await this.project.inside(request.input, 'input file');
    const { step, mappingFile } = await this.stepOf(request.input);
    const mappingPath = await this.project.inside(mappingFile, 'mapping file');
    const saved = await readFile(mappingPath, 'utf8').catch(() => null);
    let yaml: string;
    let origin: MapView['origin'];
    let originNote: string;
    if (request.yaml !== undefined) {
      yaml = request.edit === undefined ? request.yaml : applyEdit(request.yaml, parseEdit(request.edit));
      origin = yaml === saved ? 'saved' : 'edited';
      originNote =
        origin === 'saved' ? `as saved in ${mappingFile}` : `changed, not saved yet: Save writes ${mappingFile}`;
    } else if (saved !== null) {
      yaml = saved;
      origin = 'saved';
      originNote = `as saved in ${mappingFile}`;
    } else {
      // What `crm-ferry mapping init --online` gives: a ready-made mapping when one reads every
      // column, else a draft whose other columns go to the account's custom fields (offline: left out).
      let draft = await draftMapping(inputPath);
      const fieldEntity = FIELD_ENTITY[draft.entity as keyof typeof FIELD_ENTITY];
      const { catalog: account } = await this.resolver();
      if (account !== null && fieldEntity !== undefined)
        draft = await draftMapping(inputPath, {
          entity: draft.entity,
          customFields: account.fieldDefinitions[fieldEntity],
        });
      const ready = await findReadyMapping(draft.header, request.input);
      yaml = ready ? ready.yaml : draft.yaml;
      origin = ready ? 'ready-made' : 'draft';
      originNote = ready
        ? `the suggestions of the ready-made ${ready.name} (it reads ${ready.reads} of the ${draft.header.length} columns); not saved yet`
        : `suggested from the column names and values (${draft.matched.length} of ${draft.header.length} columns); not saved yet`;
    }
    const raw = looseParse(yaml);
    const entity = entityOf(raw);
    const problems: YamlProblem[] = [];
    let mapping = null;
    try {
      mapping = parseMapping(yaml, mappingPath);
    } catch (error) {
      problems.push(...yamlProblems(error));
    }
    const source =
      raw && typeof raw === 'object'
        ? ((raw as Record<string, unknown>).source as Record<string, unknown> | undefined)
        : undefined;
    const sample = await readSample(inputPath, source);
    const { resolver, catalog } = await this.resolver();
    const planSteps = await this.project.planSteps();
    const steps = planSteps.map((s) => s.name).filter((name) => name !== step);
    let preview: MapView['preview'] = [];
    if (mapping) {
      // What the preview would read (a lookup file) must be inside the folder, before it is read.
      await this.project.checkMappingFiles(mapping, this.project.dir);
      try {
        preview = await previewRows({
          mapping,
          mappingFile: mappingPath,
          baseDir: this.project.dir,
          sample,
          resolver,
          step,
          ...(await this.linkKeys(mapping, step, planSteps)),
        });
      } catch (error) {
        problems.push(...yamlProblems(error));
      }
    }
    // The marks and problems in the page's words: the rule's place is the YAML's line, not a path.
    for (const row of preview)
      for (const marks of Object.values(row.marks)) for (const mark of marks) mark.text = forPage(mark.text);
    for (const problem of problems) problem.message = forPage(problem.message);
    const table = tableOf(raw, sample.header, samplesOf(sample));
    const rawMap = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
    const fieldEntity = entity in FIELD_ENTITY ? FIELD_ENTITY[entity as keyof typeof FIELD_ENTITY] : null;
    const customFields =
      catalog && fieldEntity ? catalog.fieldDefinitions[fieldEntity].map((d) => ({ name: d.name, tag: d.tag })) : [];
    const match = matchChoices(raw);
    return {
      input: request.input,
      mappingFile,
      step,
      yaml,
      origin,
      originNote,
      unsaved: yaml !== saved,
      problems,
      entity,
      key: Array.isArray(rawMap.key) ? rawMap.key.join(', ') : String(rawMap.key ?? ''),
      onDuplicate: typeof rawMap.onDuplicate === 'string' ? rawMap.onDuplicate : 'reject',
      matches: match.choices,
      match: match.chosen,
      targets: targetChoices(raw, sample.header, { entity, customFields, steps }),
      transforms: Object.keys(TRANSFORMS),
      steps,
      columns: table.columns,
      otherEntries: table.otherEntries,
      preview,
    };
  }

  /**
   * The keys of the steps a mapping links to, for the preview's links; a step not in the plan, or
   * whose files cannot be read, is named with why. Each step's keys are read once, and again only
   * when its mapping or input changes.
   */
  private async linkKeys(
    mapping: Mapping,
    step: string,
    planSteps: PlanStepFile[],
  ): Promise<{ book: ReferenceBook; unchecked: Map<string, string> }> {
    const named = new Set(
      mapping.fields.flatMap((f) => (f.ref === undefined ? [] : Array.isArray(f.ref) ? f.ref : [f.ref])),
    );
    // Other steps' links to this one make it a linked step, whose rows may repeat a record.
    let linked = false;
    for (const other of planSteps) {
      if (other.name === step || linked) continue;
      try {
        const theirs = await loadMapping(await this.project.inside(other.mapping, 'mapping file'));
        linked = theirs.fields.some((f) => (Array.isArray(f.ref) ? f.ref : [f.ref]).includes(step));
      } catch {
        // A step whose mapping does not load links nowhere yet.
      }
    }
    const book = new ReferenceBook(linked ? new Set([step]) : new Set());
    const unchecked = new Map<string, string>();
    for (const name of named) {
      if (name === step) continue;
      const found = planSteps.find((s) => s.name === name);
      if (!found) {
        unchecked.set(
          name,
          `${PLAN_FILE} has no step ${name}${planSteps.length > 0 ? ` (it has ${planSteps.map((s) => s.name).join(', ')})` : ''}; map and save its file first`,
        );
        continue;
      }
      try {
        const keys = await this.stepKeys(found);
        for (const key of keys.valid) book.addValid(name, key);
        for (const key of keys.rejected) book.addRejected(name, key);
      } catch (error) {
        unchecked.set(
          name,
          `its rows could not be read (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`,
        );
      }
    }
    return { book, unchecked };
  }

  /** A plan step's keys, read again only when its mapping or input changed. */
  private async stepKeys(step: PlanStepFile): Promise<StepKeys> {
    const mappingPath = await this.project.inside(step.mapping, 'mapping file');
    const inputPath = await this.project.inside(step.input, 'input file');
    // Its keys are read by compiling its mapping here, with the folder as the lookups' base.
    await this.project.checkMappingFileAt(mappingPath, this.project.dir);
    const [m, i] = await Promise.all([stat(mappingPath), stat(inputPath)]);
    const stamp = `${mappingPath}:${m.mtimeMs}:${m.size}:${inputPath}:${i.mtimeMs}:${i.size}`;
    const cached = this.#stepKeys.get(step.name);
    if (cached?.stamp === stamp) return cached.keys;
    const keys = readStepKeys(mappingPath, inputPath, this.project.dir);
    const entry = { stamp, keys };
    this.#stepKeys.set(step.name, entry);
    keys.catch(() => {
      if (this.#stepKeys.get(step.name) === entry) this.#stepKeys.delete(step.name);
    });
    return keys;
  }

  /** Writes the mapping file and makes the plan's step read the input with it. */
  async save(request: SaveRequest): Promise<SaveResult> {
    await this.project.inside(request.input, 'input file');
    const { step, mappingFile } = await this.stepOf(request.input);
    const mappingPath = await this.project.inside(mappingFile, 'mapping file');
    // A mapping that does not load is not saved: the plan would stop on it.
    const mapping = parseMapping(request.yaml, mappingPath);
    await this.project.checkMappingFiles(mapping, this.project.dir);
    await compileMapping(mapping, { file: mappingPath, baseDir: this.project.dir });
    await writeFileAtomic(mappingPath, request.yaml, { mode: 0o644 });
    if (!(await this.project.exists(this.planFile))) {
      // A new plan's set-up creates what the rows name and the account lacks, and lists what it cannot.
      await writeFileAtomic(
        this.planFile,
        '# The migration plan the workbench keeps: `crm-ferry run plan.yaml` runs it.\nversion: 1\nsetup: {}\nsteps: []\n',
        { mode: 0o644 },
      );
    }
    await this.project.putStep({ name: step, mapping: mappingFile, input: request.input });
    return { mappingFile, plan: PLAN_FILE, step };
  }

  // -------------------------------------------------------------------------------------------
  // Check, Run, Verify, Undo: jobs.

  private async needPlan(): Promise<void> {
    if (!(await this.project.exists(this.planFile))) {
      throw new FerryError('USAGE', `the folder has no ${PLAN_FILE} yet`, {
        hint: 'Open a file in Files, and save its mapping in Map: that writes the plan.',
      });
    }
    // A plan edited by hand may name files elsewhere: a check or a run reads only inside the folder.
    await this.project.checkPlanFiles();
  }

  private v1Live(): V1LiveConnection {
    return v1LiveConnection({
      target: this.deps.client.transport,
      token: this.deps.v1Token,
      format: 'xml',
      since: undefined,
    });
  }

  /** `validate --plan plan.yaml --online`, then `run plan.yaml --dry-run`: what the run will do, before it does it. */
  async check(context: JobContext): Promise<void> {
    await this.needPlan();
    const { plannedSetup, runImport } = await import('../load/index.ts');
    const { validatePlan } = await import('../plan/index.ts');
    const { client } = this.deps;
    // The names as the plan's set-up would leave them, and the account's records for `match:`, as validate --online reads them.
    this.#catalog = null;
    const setup = await plannedSetup(this.planFile, client, context.signal);
    const resolver = setup?.resolver ?? createResolver(await this.catalog());
    const report = await validatePlan({
      planFile: this.planFile,
      rejectsDir: join(this.project.stateDir, CHECK_DIR),
      resolver,
      service: new RecordService(client, context.signal),
      signal: context.signal,
    });
    if (report.interrupted)
      throw new FerryError('USAGE', 'the check was stopped before the end: its counts are partial');
    const steps: CheckStepView[] = [];
    for (const step of report.steps) {
      steps.push({
        step: step.step,
        input: shownName(this.project.dir, step.inputFile),
        mapping: shownName(this.project.dir, step.mappingFile),
        rowsRead: step.rowsRead,
        ok: step.ok,
        skipped: step.skipped,
        rejected: step.rejected,
        rejects: step.rejectsFile ? await rejectsOf(step.rejectsFile) : [],
        rejectsFile: step.rejectsFile ? shownName(this.project.dir, step.rejectsFile) : null,
        warnings: WARNING_CODES.filter((code) => step.warnings[code] > 0).map((code) => ({
          kind: warningKind(code),
          count: step.warnings[code],
        })),
        notCarried: step.notCarried.map((n) => ({ column: n.column, rows: n.rows })),
      });
    }
    const check: CheckView = {
      steps,
      create: [],
      personMust: [],
      requests: 0,
      limitPerHour: null,
      estimatedSeconds: null,
    };
    const { KIND_WORDS } = await import('../load/index.ts');
    if (setup) {
      check.create = setup.plan.create.map(
        (item) =>
          `${KIND_WORDS[item.kind]} ${item.name}${item.kind === 'milestone' && item.pipeline ? ` in pipeline ${item.pipeline}` : ''}`,
      );
      check.personMust = setup.plan.checklist.map((item) =>
        forPage(
          `${KIND_WORDS[item.kind]} ${item.name}${item.scope ? ` (${item.scope})` : ''}: named by ${item.rows} row${item.rows === 1 ? '' : 's'} of ${item.steps.join(', ')}`,
        ),
      );
    }
    context.result({ check });
    // The dry run: the requests the run needs and the time at the account's rate.
    const v1Live = this.v1Live();
    try {
      const dry = await runImport(
        { ...this.#state(), dryRun: true },
        { client, account: this.deps.account, signal: context.signal, v1Live },
      );
      if (dry.dryRun) {
        check.requests = dry.dryRun.requests;
        check.limitPerHour = dry.dryRun.limitPerHour;
        check.estimatedSeconds = dry.dryRun.estimatedSeconds;
      }
      if (dry.stopped) throw dry.stopped;
    } finally {
      await v1Live.close();
    }
    context.result({ check });
  }

  /** `crm-ferry run plan.yaml [--limit N]`: the same run, its events turned into the page's progress. */
  async run(context: JobContext, limit: number | null): Promise<void> {
    await this.needPlan();
    const { runImport } = await import('../load/index.ts');
    const points: ProgressPoint[] = [];
    const started = Date.now();
    const counts = new Map<string, StepProgress>();
    let requests = 0;
    let quota: { remaining: number | null; limit: number | null } = { remaining: null, limit: null };
    const show = (): void => {
      const steps = [...counts.values()];
      const done = steps.reduce((sum, s) => sum + s.rowsRead, 0);
      const total = steps.every((s) => s.total !== null)
        ? steps.reduce((sum, s) => sum + (s.total as number), 0)
        : null;
      const elapsed = (Date.now() - started) / 1000;
      const progress: RunProgress = {
        steps,
        requests,
        elapsedMs: Date.now() - started,
        quotaRemaining: quota.remaining,
        quotaLimit: quota.limit,
        secondsLeft: total !== null && done > 0 ? Math.max(0, Math.round((elapsed / done) * (total - done))) : null,
        points: points.slice(-120),
      };
      context.progress(progress);
    };
    const onEvent = (event: ImportEvent): void => {
      if (event.type === 'start')
        for (const step of event.steps)
          counts.set(step, {
            step,
            total: null,
            rowsRead: 0,
            created: 0,
            updated: 0,
            unchanged: 0,
            rejected: 0,
            skipped: 0,
            repeated: 0,
          });
      else if (event.type === 'progress') {
        for (const step of stepProgress(event.steps)) counts.set(step.step, step);
        requests = event.requests;
        quota = { remaining: event.governor.remaining, limit: event.governor.limitPerHour };
        points.push({
          at: Math.round(event.elapsedMs / 100) / 10,
          rows: [...counts.values()].reduce((sum, s) => sum + s.rowsRead, 0),
          requests,
        });
      } else if (event.type === 'row') {
        const step = counts.get(event.step);
        if (step) {
          step.rowsRead += 1;
          if (
            event.action === 'created' ||
            event.action === 'updated' ||
            event.action === 'unchanged' ||
            event.action === 'rejected' ||
            event.action === 'skipped' ||
            event.action === 'repeated'
          )
            step[event.action] += 1;
        }
      } else return;
      show();
    };
    const v1Live = this.v1Live();
    let summary: ImportSummary;
    try {
      summary = await runImport(
        { ...this.#state(), ...(limit === null ? {} : { limit }) },
        {
          client: this.deps.client,
          account: this.deps.account,
          signal: context.signal,
          onEvent,
          progressEveryMs: this.deps.progressEveryMs ?? 500,
          v1Live,
        },
      );
    } finally {
      await v1Live.close();
    }
    if (summary.run) this.#pageRuns.add(summary.run);
    const rejected = summary.steps.reduce((sum, s) => sum + s.rejected, 0);
    // The command line's closing line tells of flags to type; the page says its own next step.
    const text =
      rejected > 0 && !summary.stopped && !summary.interrupted
        ? `${rejected} row${rejected === 1 ? ' was' : 's were'} rejected, the others are in the account: fix the file or the mapping, then Run everything again: only the rejected rows are sent.`
        : forPage(this.deps.words.runOutcome(summary, this.project.dir, v1Live.reads));
    const run: RunOutcome = {
      id: summary.run ?? '',
      text,
      status: summary.stopped ? 'stopped' : summary.interrupted ? 'interrupted' : rejected > 0 ? 'rejects' : 'done',
      steps: stepProgress(summary.steps),
      requests: summary.requests,
      elapsedMs: summary.elapsedMs,
    };
    context.result({ run });
    if (summary.stopped) throw summary.stopped;
  }

  /** `crm-ferry verify plan.yaml --report`: the summary, and the same HTML page for the Verify view. */
  async verify(context: JobContext): Promise<void> {
    await this.needPlan();
    const { runVerify } = await import('../verify/index.ts');
    const { verifyReport, renderReport } = await import('../report/index.ts');
    const { words } = this.deps;
    const usage = await words.recordUsage(this.deps.client);
    const v1Live = this.v1Live();
    let summary;
    try {
      summary = await runVerify(this.#state(), {
        client: this.deps.client,
        account: this.deps.account,
        signal: context.signal,
        v1Live,
      });
    } finally {
      await v1Live.close();
    }
    const outcome = words.verifyOutcome(summary);
    const input = verifyReport(summary, {
      version: this.deps.version,
      plan: PLAN_FILE,
      account: this.deps.account.account,
      usage: usage.stop(),
      outcome,
      shown: (p) => words.shownPath(p, this.project.dir),
    });
    this.#verifyReport = renderReport(input);
    const verify: VerifyView = {
      matches: summary.matches,
      text: forPage(outcome),
      steps: summary.steps.map((s) => ({
        step: s.step,
        found: s.found,
        missing: s.missing,
        extra: s.extra,
        differing: s.differing,
        unresolved: s.unresolved,
      })),
      differences: summary.differences.length,
      reportUrl: '/report/verify.html',
    };
    context.result({ verify });
  }

  /** The last verify's page, as `verify --report` writes it; null before one. */
  verifyReportHtml(): string | null {
    return this.#verifyReport;
  }

  /** The plan, its state folder and, when given, the store: what run, verify and the dry run are opened with. */
  #state(): { source: { kind: 'plan'; planFile: string }; stateDir: string; stateStore: StateStoreOptions | null } {
    return {
      source: { kind: 'plan', planFile: this.planFile },
      stateDir: this.project.stateDir,
      stateStore: this.deps.stateStore ?? null,
    };
  }

  /** `crm-ferry rollback plan.yaml --dry-run`: what Undo would delete and set back. */
  async undoPreview(): Promise<UndoPreview> {
    await this.needPlan();
    const { runRollback } = await import('../load/index.ts');
    if (!this.deps.stateStore && !(await this.project.exists(this.project.stateDir))) {
      return {
        lines: ['Nothing to undo: no run has written to the account from this folder.'],
        deleted: 0,
        restored: 0,
        runs: 0,
      };
    }
    const summary = await runRollback(
      { stateDir: this.project.stateDir, stateStore: this.deps.stateStore, dryRun: true },
      { client: this.deps.client, account: this.deps.account },
    );
    return {
      lines: this.deps.words
        .rollbackLines(summary, true)
        .map(forPage)
        .filter((line) => line !== ''),
      deleted: summary.deleted,
      restored: summary.restored,
      runs: summary.runs.length,
    };
  }

  /** `crm-ferry rollback plan.yaml`: undoes the last run. */
  async undo(context: JobContext): Promise<void> {
    await this.needPlan();
    const { runRollback } = await import('../load/index.ts');
    const summary = await runRollback(
      { stateDir: this.project.stateDir, stateStore: this.deps.stateStore },
      { client: this.deps.client, account: this.deps.account, signal: context.signal },
    );
    const undo: UndoResult = {
      text: forPage(this.deps.words.rollbackLines(summary, false).join('\n')),
      deleted: summary.deleted,
      restored: summary.restored,
    };
    context.result({ undo });
  }

  /** The latest run of the folder's state, whoever started it, or undone. */
  latestRun(): Promise<LatestRunView> {
    return latestRun(this.project.stateDir, this.#pageRuns, (path) => shownName(this.project.dir, path));
  }

  /** The result files of the state folder, for download. */
  async results(): Promise<Array<{ name: string; bytes: number }>> {
    const { readdir, stat } = await import('node:fs/promises');
    const folder = join(this.project.stateDir, 'results');
    const names = await readdir(folder).catch(() => [] as string[]);
    const out: Array<{ name: string; bytes: number }> = [];
    for (const name of names.sort()) {
      if (name.startsWith('.') || !/\.csv$/i.test(name)) continue;
      const info = await stat(join(folder, name)).catch(() => null);
      if (info?.isFile()) out.push({ name: shownName(this.project.dir, join(folder, name)), bytes: info.size });
    }
    return out;
  }
}
