import { type CrmClient, readAccountCatalog } from '../client/index.ts';
import { FerryError } from '../errors/index.ts';
import { StateDir, writeStateSteps, type AccountIdentity, type JournalEntry } from '../journal/index.ts';
import { type AccountCatalog, type CatalogResolver, type CompiledMapping, createResolver, type Entity, type NameKind, type NameUse, type TransformRegistry } from '../mapping/index.ts';
import { openStepItems, type PreparedStep, prepareRun, type SetupSpec } from '../plan/index.ts';
import { openRun } from './open-run.ts';
import { CHECKLIST_KINDS, KIND_WORDS, SETUP_KINDS, type ChecklistKind, type SetupKind } from './setup-kinds.ts';

export { CHECKLIST_KINDS, KIND_WORDS, SETUP_KINDS, type ChecklistKind, type SetupKind } from './setup-kinds.ts';

type Body = Record<string, unknown>;

/** One thing set-up creates. */
export interface SetupItem {
  kind: SetupKind;
  name: string;
  /** Milestones: the pipeline's name; null for the oldest active pipeline. */
  pipeline: string | null;
  /** From the plan's `setup:` lists, or named by the rows. */
  origin: 'plan' | 'rows';
  /** The create body, without links to records made in the same set-up (a milestone's pipeline). */
  body: Body;
  /** The journal key: kind and name (and pipeline). */
  key: string;
}

/** One thing the rows need that only a person can make. */
export interface ChecklistItem {
  kind: ChecklistKind;
  name: string;
  /** Custom fields: `parties`, `kases` or `opportunities`, and the data tag when there is one. */
  scope: string | null;
  /** Steps whose rows name it, and how many rows. */
  steps: string[];
  rows: number;
}

export interface SetupPlan {
  create: SetupItem[];
  /** Names the plan lists or the rows use that the account has already. */
  present: number;
  checklist: ChecklistItem[];
}

export interface SetupReport extends SetupPlan {
  /** What was created (by this run, or by an interrupted one and found on resuming), with ids. */
  created: Array<{ kind: SetupKind; name: string; id: number }>;
  dryRun: boolean;
}

/** Where each kind is created and deleted (a pipeline's DELETE archives it). */
const SETUP_API: Record<SetupKind, { path: string; one: string }> = {
  pipeline: { path: '/pipelines', one: 'pipeline' },
  milestone: { path: '/milestones', one: 'milestone' },
  activityType: { path: '/activitytypes', one: 'activityType' },
  trackDefinition: { path: '/trackdefinitions', one: 'trackDefinition' },
};

const CAPTURE_RULE = { parties: 'PARTY', opportunities: 'OPPORTUNITY', kases: 'KASE' } as const;
const PLURAL: Partial<Record<Entity, keyof typeof CAPTURE_RULE>> = { party: 'parties', opportunity: 'opportunities', kase: 'kases' };

/** The set-up journal sits beside the steps' (as step `_setup`); a step name cannot start with `_`, so it never meets one. */
const SETUP_STEP = '_setup';

function norm(name: string): string {
  return name.trim().toLowerCase();
}

/** An icon for an activity type the rows name, from words in its name. */
export function iconFor(name: string): string {
  const n = norm(name);
  if (/mail/.test(n)) return 'MAIL';
  if (/call|phone/.test(n)) return 'PHONE';
  if (/meet/.test(n)) return 'MEETING';
  if (/task|todo|to-do/.test(n)) return 'CLIPBOARD';
  return 'DOCUMENT';
}

/** A name the mapped rows use, with where. */
export interface NameNeed {
  use: NameUse;
  entity: Entity;
  steps: Set<string>;
  rows: number;
}

const NEEDED_KINDS: ReadonlySet<NameKind> = new Set<NameKind>(['milestone', 'activityType', 'trackDefinition', ...CHECKLIST_KINDS]);

function needKey(use: NameUse): string {
  const scope = use.scope;
  return [use.kind, norm(use.name), scope?.pipeline ?? '', scope?.entity ?? '', scope?.tag ?? ''].join('\u0000');
}

/**
 * Maps every row of the steps (as validate does, without writing) and collects the names their
 * records use of the kinds set-up creates or lists. Rows the mapping rejects name nothing.
 */
export async function collectNames(steps: readonly PreparedStep[], compiled: readonly CompiledMapping[], signal?: AbortSignal): Promise<NameNeed[]> {
  const needs = new Map<string, NameNeed>();
  for (const [index, step] of steps.entries()) {
    const mapping = compiled[index] as CompiledMapping;
    const opened = await openStepItems(step, mapping, signal);
    if (!opened) break;
    for await (const item of opened.items) {
      if (item.kind !== 'record') continue;
      for (const use of item.names) {
        if (!NEEDED_KINDS.has(use.kind) || use.name.trim() === '') continue;
        const key = needKey(use);
        let need = needs.get(key);
        if (!need) {
          need = { use, entity: mapping.entity, steps: new Set(), rows: 0 };
          needs.set(key, need);
        }
        need.steps.add(step.name);
        need.rows += 1;
      }
    }
  }
  return [...needs.values()];
}

/** The pipeline a milestone without one goes to: the oldest active, as the service's own default. */
function defaultPipeline(catalog: AccountCatalog): string | null {
  const oldest = [...catalog.pipelines].sort((a, b) => a.id - b.id)[0];
  return oldest ? oldest.name : null;
}

function hasName(items: ReadonlyArray<{ id: number; name: string }>, name: string): boolean {
  const wanted = norm(name);
  return items.some((item) => norm(item.name) === wanted || String(item.id) === name.trim());
}

/**
 * Decides what set-up creates and what it lists for a person: the plan's lists first (their
 * attributes win), then, with `derive`, whatever the rows name and the account lacks. Nothing is
 * created twice: a name the account has, or one already planned, is left.
 */
export function planSetup(spec: SetupSpec, needs: readonly NameNeed[], catalog: AccountCatalog): SetupPlan {
  const resolver = createResolver(catalog);
  const create: SetupItem[] = [];
  const planned = new Set<string>();
  let present = 0;
  const add = (item: Omit<SetupItem, 'key'>): void => {
    const key = `${item.kind}:${item.kind === 'milestone' ? `${item.pipeline ?? ''}/` : ''}${norm(item.name)}`;
    if (planned.has(key)) return;
    planned.add(key);
    create.push({ ...item, key });
  };
  const pipelineExists = (name: string): boolean => hasName(catalog.pipelines, name) || planned.has(`pipeline:${norm(name)}`);
  const milestoneExists = (name: string, pipeline: string | null): boolean => {
    const pool = pipeline === null ? catalog.milestones : catalog.milestones.filter((m) => norm(m.pipelineName) === norm(pipeline));
    return hasName(pool, name);
  };
  const addPipeline = (name: string, origin: SetupItem['origin'], description?: string): void => {
    if (pipelineExists(name)) {
      if (origin === 'plan') present += 1;
      return;
    }
    add({ kind: 'pipeline', name: name.trim(), pipeline: null, origin, body: { name: name.trim(), ...(description !== undefined ? { description } : {}) } });
  };
  const addMilestone = (name: string, pipeline: string | null, origin: SetupItem['origin'], extra: Body = {}): void => {
    if (pipeline !== null) addPipeline(pipeline, origin);
    // A milestone the rows name without a pipeline is found in any active pipeline; created, it
    // goes to the oldest one, as the service does with a milestone sent without a pipeline.
    if (milestoneExists(name, pipeline)) {
      present += 1;
      return;
    }
    const target = pipeline ?? defaultPipeline(catalog);
    add({ kind: 'milestone', name: name.trim(), pipeline: target, origin, body: { name: name.trim(), ...extra } });
  };
  const addActivityType = (name: string, origin: SetupItem['origin'], icon?: string, updateLastContacted?: boolean): void => {
    if (hasName(catalog.activityTypes, name)) {
      present += 1;
      return;
    }
    const body: Body = { name: name.trim(), icon: { id: icon ?? iconFor(name) } };
    if (updateLastContacted !== undefined) body.updateLastContacted = updateLastContacted;
    add({ kind: 'activityType', name: name.trim(), pipeline: null, origin, body });
  };
  const addTrackDefinition = (name: string, origin: SetupItem['origin'], appliesTo: keyof typeof CAPTURE_RULE, tasks: Array<{ description: string; daysAfter: number; daysAfterRule?: 'TRACK_START' | 'LAST_TASK' }> = []): void => {
    if (hasName(catalog.trackDefinitions, name)) {
      present += 1;
      return;
    }
    const body: Body = {
      description: name.trim(),
      captureRule: CAPTURE_RULE[appliesTo],
      direction: 'START_DATE',
      taskDefinitions: tasks.map((task, index) => ({ description: task.description, daysAfterRule: task.daysAfterRule ?? 'TRACK_START', daysAfter: task.daysAfter, displayOrder: index })),
    };
    add({ kind: 'trackDefinition', name: name.trim(), pipeline: null, origin, body });
  };

  for (const pipeline of spec.pipelines) addPipeline(pipeline.name, 'plan', pipeline.description);
  for (const m of spec.milestones) {
    const extra: Body = {};
    if (m.probability !== undefined) extra.probability = m.probability;
    if (m.complete !== undefined) extra.complete = m.complete;
    if (m.description !== undefined) extra.description = m.description;
    addMilestone(m.name, m.pipeline ?? null, 'plan', extra);
  }
  for (const type of spec.activityTypes) addActivityType(type.name, 'plan', type.icon, type.updateLastContacted);
  const appliesTo = new Map<string, keyof typeof CAPTURE_RULE>();
  for (const need of needs) if (need.use.kind === 'trackDefinition') appliesTo.set(norm(need.use.name), PLURAL[need.entity] ?? 'kases');
  for (const definition of spec.trackDefinitions) {
    const target = definition.for ?? appliesTo.get(norm(definition.description));
    if (target === undefined) {
      throw new FerryError('PLAN_INVALID', `setup.trackDefinitions: \`${definition.description}\` is named by no row, so what it applies to is not known; say \`for: kases\` (or parties, opportunities)`);
    }
    addTrackDefinition(definition.description, 'plan', target, definition.tasks);
  }

  const checklist: ChecklistItem[] = [];
  for (const need of needs) {
    const { use } = need;
    if (spec.derive) {
      if (use.kind === 'milestone') addMilestone(use.name, use.scope?.pipeline ?? null, 'rows');
      else if (use.kind === 'activityType') addActivityType(use.name, 'rows');
      else if (use.kind === 'trackDefinition') addTrackDefinition(use.name, 'rows', PLURAL[need.entity] ?? 'kases');
    }
    if (!(CHECKLIST_KINDS as readonly string[]).includes(use.kind)) continue;
    // Teams, stages and lost reasons are only checked where the account lists them.
    if (use.kind === 'team' && catalog.teams === null) continue;
    if (use.kind === 'stage' && !catalog.stages) continue;
    if (use.kind === 'lostReason' && !catalog.lostReasons) continue;
    if (resolver.resolve(use.kind, use.name, use.scope) !== undefined) continue;
    const scope = use.kind === 'fieldDefinition' ? `${use.scope?.entity ?? 'parties'}${use.scope?.tag ? `, data tag ${use.scope.tag}` : ''}` : null;
    checklist.push({ kind: use.kind as ChecklistKind, name: use.name.trim(), scope, steps: [...need.steps], rows: need.rows });
  }
  create.sort((a, b) => SETUP_KINDS.indexOf(a.kind) - SETUP_KINDS.indexOf(b.kind));
  return { create, present, checklist };
}

/** --strict: a checklist that is not empty stops everything before the first write. */
export function assertNothingMissing(checklist: readonly ChecklistItem[]): void {
  if (checklist.length === 0) return;
  throw new FerryError('MAPPING_UNKNOWN_NAME', `--strict: the account lacks ${checklist.map((c) => `${KIND_WORDS[c.kind]} \`${c.name}\``).join(', ')}, which the interface cannot create; nothing was written`, {
    hint: 'Make them in the service (custom fields, task categories, project stages and lost reasons in the account settings, users and teams by inviting them), or leave out --strict to import the other rows.',
  });
}

/** An id from an account catalog for an item created by an earlier, interrupted set-up. */
function idIn(catalog: AccountCatalog, kind: SetupKind, name: string, pipeline: string | null): number | undefined {
  const wanted = norm(name);
  const pool =
    kind === 'pipeline'
      ? catalog.pipelines
      : kind === 'milestone'
        ? catalog.milestones.filter((m) => pipeline === null || norm(m.pipelineName) === norm(pipeline))
        : kind === 'activityType'
          ? catalog.activityTypes
          : catalog.trackDefinitions;
  return pool.find((item) => norm(item.name) === wanted)?.id;
}

interface SetupIntentBody extends Body {
  kind: SetupKind;
  name: string;
  pipeline: string | null;
}

function isIntentBody(body: Body | null | undefined): body is SetupIntentBody {
  return !!body && (SETUP_KINDS as readonly string[]).includes(String(body.kind)) && typeof body.name === 'string';
}

export interface ApplySetupDeps {
  client: CrmClient;
  state: StateDir;
  /** The run the creates belong to: a rollback of that run removes them. */
  run: string;
  now?: () => Date;
  /** --reconcile: a set-up journal that is not what its runs wrote is taken as it is (the set-up finds its items by name anyway). @default false */
  reconcile?: boolean;
}

/**
 * Creates what the plan says, journaled like the rows: an intent before each create, its id
 * after. A set-up cut off between the two is settled on the next one by name (the account's
 * catalog is read afresh): found, it is recorded as created by that run (so rollback removes it);
 * not found, it is created now. Either way each item is created once.
 *
 * Gives back, besides what was created, the catalog as the set-up left it: `catalog` with each
 * new item under the id the service answered, so that the run needs no second read of the names.
 */
export async function applySetup(plan: SetupPlan, catalog: AccountCatalog, deps: ApplySetupDeps): Promise<{ created: SetupReport['created']; catalog: AccountCatalog }> {
  const now = deps.now ?? (() => new Date());
  const journal = await deps.state.loadJournal(SETUP_STEP, { trustAsItIs: deps.reconcile ?? false });
  const writer = await deps.state.openJournal(SETUP_STEP, journal);
  const created: SetupReport['created'] = [];
  // Found on resuming, an item is in `catalog` already; what is created now is added to it.
  const made: Array<SetupItem & { id: number }> = [];
  try {
    for (const row of journal.rows.values()) {
      const intent = row.pending;
      if (!intent || !isIntentBody(intent.body)) continue;
      const { kind, name, pipeline } = intent.body;
      const id = idIn(catalog, kind, name, pipeline);
      if (id !== undefined) {
        await writer.append({ t: 'done', k: row.key, op: 'create', run: intent.run, at: now().toISOString(), id, fp: '', origin: 'created' });
        created.push({ kind, name, id });
      } else {
        await writer.append({ t: 'cancel', k: row.key, run: deps.run, at: now().toISOString() });
      }
    }
    const pipelineIds = new Map<string, number>(catalog.pipelines.map((p) => [norm(p.name), p.id]));
    for (const p of created) if (p.kind === 'pipeline') pipelineIds.set(norm(p.name), p.id);
    for (const item of plan.create) {
      if (created.some((c) => c.kind === item.kind && norm(c.name) === norm(item.name))) continue;
      const body: Body = { ...item.body };
      if (item.kind === 'milestone' && item.pipeline !== null) {
        const pipelineId = pipelineIds.get(norm(item.pipeline));
        if (pipelineId === undefined) throw new FerryError('INTERNAL', `set-up: the pipeline ${item.pipeline} of milestone ${item.name} was neither found nor created`);
        body.pipeline = { id: pipelineId };
      }
      const intentBody: SetupIntentBody = { kind: item.kind, name: item.name, pipeline: item.pipeline, request: body };
      await writer.append({ t: 'intent', k: item.key, op: 'create', run: deps.run, at: now().toISOString(), fp: '', body: intentBody });
      const { path, one } = SETUP_API[item.kind];
      const answer = await deps.client.transport.request({ method: 'POST', path, json: { [one]: body } });
      const id = ((answer.body as Body | null)?.[one] as Body | undefined)?.id;
      if (typeof id !== 'number') throw new FerryError('API_RESPONSE_INVALID', `POST ${path}: the answer has no ${one}.id`);
      await writer.append({ t: 'done', k: item.key, op: 'create', run: deps.run, at: now().toISOString(), id, fp: '', origin: 'created' });
      if (item.kind === 'pipeline') pipelineIds.set(norm(item.name), id);
      created.push({ kind: item.kind, name: item.name, id });
      made.push({ ...item, id });
    }
  } finally {
    await writer.close();
  }
  return { created, catalog: withItems(catalog, made) };
}

export interface UndoSetupResult {
  deleted: number;
  alreadyGone: number;
  /** What the service would not delete (a milestone an opportunity of another run still uses), with its answer. */
  kept: Array<{ kind: SetupKind; id: number; reason: string }>;
}

/**
 * Removes what the set-ups of `runs` created, newest kind first (track definitions, activity
 * types, milestones, then pipelines, which the service archives), journaled under `rollbackRun`.
 */
export async function undoSetup(state: StateDir, runs: ReadonlySet<string>, deps: { client: CrmClient; rollbackRun: string; dryRun: boolean; signal?: AbortSignal }): Promise<UndoSetupResult> {
  const result: UndoSetupResult = { deleted: 0, alreadyGone: 0, kept: [] };
  const made = new Map<string, { kind: SetupKind; id: number }>();
  const kinds = new Map<string, SetupKind>();
  for await (const entry of state.readJournal(SETUP_STEP)) {
    if (entry.t === 'intent' && isIntentBody(entry.body)) kinds.set(entry.k, entry.body.kind);
    if (entry.t !== 'done' || !runs.has(entry.run)) continue;
    const kind = kinds.get(entry.k);
    if (entry.op === 'create' && kind) made.set(entry.k, { kind, id: entry.id });
  }
  // What a later line says is gone (an earlier rollback) is not deleted twice.
  const loaded = await state.loadJournal(SETUP_STEP);
  const current = loaded.rows;
  const order = [...made.entries()].filter(([key, item]) => current.get(key)?.id === item.id).sort((a, b) => SETUP_KINDS.indexOf(b[1].kind) - SETUP_KINDS.indexOf(a[1].kind));
  if (order.length === 0) return result;
  if (deps.dryRun) return { deleted: order.length, alreadyGone: 0, kept: [] };
  const writer = await state.openJournal(SETUP_STEP, loaded);
  try {
    for (const [key, { kind, id }] of order) {
      if (deps.signal?.aborted) break;
      const at = new Date().toISOString();
      const entry: JournalEntry = { t: 'intent', k: key, op: 'delete', run: deps.rollbackRun, at, fp: '', id };
      await writer.append(entry);
      // Refused (still in use by records no rollback removed): kept and said; the records it holds are not this rollback's to remove.
      const answer = await deps.client.transport.request({ method: 'DELETE', path: `${SETUP_API[kind].path}/${id}`, accept: [404, 400, 409, 422] });
      if (answer.status !== 404 && answer.status >= 400) {
        const body = answer.body as { message?: unknown; errors?: Array<{ message?: unknown }> } | null;
        const said = body?.errors?.[0]?.message ?? body?.message;
        result.kept.push({ kind, id, reason: typeof said === 'string' ? said : `the service answered ${answer.status}` });
        await writer.append({ t: 'cancel', k: key, run: deps.rollbackRun, at: new Date().toISOString() });
        continue;
      }
      if (answer.status === 404) result.alreadyGone += 1;
      else result.deleted += 1;
      await writer.append({ t: 'done', k: key, op: 'delete', run: deps.rollbackRun, at: new Date().toISOString(), id, fp: '' });
    }
  } finally {
    await writer.close();
  }
  return result;
}

/** The runs whose set-up changed the account, for rollback's choice of runs. */
export async function setupRuns(state: StateDir): Promise<string[]> {
  const runs = new Set<string>();
  for await (const entry of state.readJournal(SETUP_STEP)) if (entry.t === 'done' && entry.op === 'create') runs.add(entry.run);
  return [...runs];
}

/** The catalog with set-up's items added: created ones under their ids, planned ones under made-up ids. */
function withItems(catalog: AccountCatalog, items: ReadonlyArray<SetupItem & { id: number }>): AccountCatalog {
  const out: AccountCatalog = {
    ...catalog,
    pipelines: [...catalog.pipelines],
    milestones: [...catalog.milestones],
    activityTypes: [...catalog.activityTypes],
    trackDefinitions: [...catalog.trackDefinitions],
  };
  // Pipelines first: a milestone's pipeline may be one of the items.
  for (const item of items) if (item.kind === 'pipeline') out.pipelines.push({ id: item.id, name: item.name });
  for (const { kind, id, name, pipeline } of items) {
    if (kind === 'milestone') {
      const found = out.pipelines.find((p) => norm(p.name) === norm(pipeline ?? ''));
      out.milestones.push({ id, name, pipelineId: found?.id ?? 0, pipelineName: found?.name ?? pipeline ?? '' });
    } else if (kind === 'activityType') out.activityTypes.push({ id, name });
    else if (kind === 'trackDefinition') out.trackDefinitions.push({ id, name });
  }
  return out;
}

/** The catalog as it will be after set-up, with made-up ids (below any the service gives) for what is planned. */
function withPlanned(catalog: AccountCatalog, plan: SetupPlan): AccountCatalog {
  return withItems(
    catalog,
    plan.create.map((item, index) => ({ ...item, id: -1_000_000 - index })),
  );
}

export interface SetupForRunOptions {
  spec: SetupSpec;
  steps: readonly PreparedStep[];
  compiled: readonly CompiledMapping[];
  dryRun: boolean;
  strict: boolean;
  signal?: AbortSignal;
  /** Told the plan (what to create, the checklist) before anything is written. */
  onPlan?: (plan: SetupPlan) => void;
  /** The account's names, when the caller has just read them. @default read here */
  catalog?: AccountCatalog | null;
}

/**
 * The set-up of one run: read the account, map the rows for the names they use, tell the plan
 * (checklist included) before any write, stop under `strict` when the checklist is not empty,
 * create what is missing, and give back a resolver that knows what was created.
 */
export async function setupForRun(options: SetupForRunOptions, deps: ApplySetupDeps): Promise<{ report: SetupReport; resolver: CatalogResolver | null; catalog: AccountCatalog }> {
  const catalog = options.catalog ?? (await readAccountCatalog(deps.client));
  const needs = await collectNames(options.steps, options.compiled, options.signal);
  const plan = planSetup(options.spec, needs, catalog);
  options.onPlan?.(plan);
  if (options.strict) assertNothingMissing(plan.checklist);
  // A dry run creates nothing, but its rows are mapped as if it had: the planned names resolve.
  if (options.dryRun) return { report: { ...plan, created: [], dryRun: true }, resolver: createResolver(withPlanned(catalog, plan)), catalog };
  await writeStateSteps(deps.state.dir, []);
  // Pending intents of an interrupted set-up are settled even when nothing is left to create.
  const applied = await applySetup(plan, catalog, deps);
  return { report: { ...plan, created: applied.created, dryRun: false }, resolver: createResolver(applied.catalog), catalog: applied.catalog };
}

/**
 * `validate --online` of a plan with `setup:`: the account as the set-up would leave it (what it
 * would create resolves), so that validate rejects what the run would, and the set-up's plan for
 * its checklist. Null for a plan without `setup:`.
 */
export async function plannedSetup(planFile: string, client: CrmClient, signal?: AbortSignal, transforms?: TransformRegistry): Promise<{ resolver: CatalogResolver; plan: SetupPlan } | null> {
  const { plan: loaded, steps, compiled } = await prepareRun({ kind: 'plan', planFile }, { transforms });
  if (!loaded?.setup) return null;
  const catalog = await readAccountCatalog(client);
  const plan = planSetup(loaded.setup, await collectNames(steps, compiled, signal), catalog);
  return { resolver: createResolver(withPlanned(catalog, plan)), plan };
}

export interface SetupCommandOptions {
  planFile: string;
  stateDir: string;
  dryRun?: boolean;
  strict?: boolean;
}

/**
 * `crm-ferry setup PLAN`: the plan's set-up alone, in the plan's state folder (so that a later
 * `run` and `rollback` know it). A plan without `setup:` derives everything.
 */
export async function runSetup(
  options: SetupCommandOptions,
  deps: { client: CrmClient; account?: AccountIdentity | undefined; signal?: AbortSignal; onPlan?: (plan: SetupPlan) => void; transforms?: TransformRegistry },
): Promise<SetupReport> {
  // Opened as a run is, with all of the account's names (the set-up creates what the rows name and
  // the account lacks); the state is the account's, checked by its users.
  const { plan, steps, compiled, names, state } = await openRun(
    { source: { kind: 'plan', planFile: options.planFile }, prepare: { transforms: deps.transforms }, allNames: () => true, state: { dir: options.stateDir, account: deps.account, keepUsers: !options.dryRun } },
    { client: deps.client },
  );
  const catalog = names.catalog as AccountCatalog;
  try {
    const spec = plan?.setup ?? { derive: true, pipelines: [], milestones: [], activityTypes: [], trackDefinitions: [] };
    const forRun: SetupForRunOptions = { spec, steps, compiled, dryRun: options.dryRun ?? false, strict: options.strict ?? false, catalog };
    if (deps.signal) forRun.signal = deps.signal;
    if (deps.onPlan) forRun.onPlan = deps.onPlan;
    const { report } = await setupForRun(forRun, { client: deps.client, state, run: state.newRunId() });
    return report;
  } finally {
    await state.close();
  }
}
