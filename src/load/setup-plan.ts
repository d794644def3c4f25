/**
 * Set-up, planning: the names the mappings need (stages, milestones, activity types, track
 * definitions ...), set against the account's catalogue, giving what to create and what a person
 * must add by hand (the checklist). A plan is a value: printed by a dry run before it is applied.
 */
import { FerryError } from '../errors/index.ts';
import {
  type AccountCatalog,
  type CompiledMapping,
  createResolver,
  type Entity,
  type NameKind,
  type NameUse,
} from '../mapping/index.ts';
import { openStepItems, type PreparedStep, type SetupSpec } from '../plan/index.ts';
import { CHECKLIST_KINDS, KIND_WORDS, SETUP_KINDS, type ChecklistKind, type SetupKind } from './setup-kinds.ts';

export type Body = Record<string, unknown>;

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

const CAPTURE_RULE = { parties: 'PARTY', opportunities: 'OPPORTUNITY', kases: 'KASE' } as const;

const PLURAL: Partial<Record<Entity, keyof typeof CAPTURE_RULE>> = {
  party: 'parties',
  opportunity: 'opportunities',
  kase: 'kases',
};

export function norm(name: string): string {
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

const NEEDED_KINDS: ReadonlySet<NameKind> = new Set<NameKind>([
  'milestone',
  'activityType',
  'trackDefinition',
  ...CHECKLIST_KINDS,
]);

function needKey(use: NameUse): string {
  const scope = use.scope;
  return [use.kind, norm(use.name), scope?.pipeline ?? '', scope?.entity ?? '', scope?.tag ?? ''].join('\u0000');
}

/**
 * Maps every row of the steps (as validate does, without writing) and collects the names their
 * records use of the kinds set-up creates or lists. Rows the mapping rejects name nothing.
 */
export async function collectNames(
  steps: readonly PreparedStep[],
  compiled: readonly CompiledMapping[],
  signal?: AbortSignal,
): Promise<NameNeed[]> {
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
  const pipelineExists = (name: string): boolean =>
    hasName(catalog.pipelines, name) || planned.has(`pipeline:${norm(name)}`);
  const milestoneExists = (name: string, pipeline: string | null): boolean => {
    const pool =
      pipeline === null
        ? catalog.milestones
        : catalog.milestones.filter((m) => norm(m.pipelineName) === norm(pipeline));
    return hasName(pool, name);
  };
  const addPipeline = (name: string, origin: SetupItem['origin'], description?: string): void => {
    if (pipelineExists(name)) {
      if (origin === 'plan') present += 1;
      return;
    }
    add({
      kind: 'pipeline',
      name: name.trim(),
      pipeline: null,
      origin,
      body: { name: name.trim(), ...(description !== undefined ? { description } : {}) },
    });
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
  const addActivityType = (
    name: string,
    origin: SetupItem['origin'],
    icon?: string,
    updateLastContacted?: boolean,
  ): void => {
    if (hasName(catalog.activityTypes, name)) {
      present += 1;
      return;
    }
    const body: Body = { name: name.trim(), icon: { id: icon ?? iconFor(name) } };
    if (updateLastContacted !== undefined) body.updateLastContacted = updateLastContacted;
    add({ kind: 'activityType', name: name.trim(), pipeline: null, origin, body });
  };
  const addTrackDefinition = (
    name: string,
    origin: SetupItem['origin'],
    appliesTo: keyof typeof CAPTURE_RULE,
    tasks: Array<{ description: string; daysAfter: number; daysAfterRule?: 'TRACK_START' | 'LAST_TASK' }> = [],
  ): void => {
    if (hasName(catalog.trackDefinitions, name)) {
      present += 1;
      return;
    }
    const body: Body = {
      description: name.trim(),
      captureRule: CAPTURE_RULE[appliesTo],
      direction: 'START_DATE',
      taskDefinitions: tasks.map((task, index) => ({
        description: task.description,
        daysAfterRule: task.daysAfterRule ?? 'TRACK_START',
        daysAfter: task.daysAfter,
        displayOrder: index,
      })),
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
  for (const need of needs)
    if (need.use.kind === 'trackDefinition') appliesTo.set(norm(need.use.name), PLURAL[need.entity] ?? 'kases');
  for (const definition of spec.trackDefinitions) {
    const target = definition.for ?? appliesTo.get(norm(definition.description));
    if (target === undefined) {
      throw new FerryError(
        'PLAN_INVALID',
        `setup.trackDefinitions: \`${definition.description}\` is named by no row, so what it applies to is not known; say \`for: kases\` (or parties, opportunities)`,
      );
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
    const scope =
      use.kind === 'fieldDefinition'
        ? `${use.scope?.entity ?? 'parties'}${use.scope?.tag ? `, data tag ${use.scope.tag}` : ''}`
        : null;
    checklist.push({
      kind: use.kind as ChecklistKind,
      name: use.name.trim(),
      scope,
      steps: [...need.steps],
      rows: need.rows,
    });
  }
  create.sort((a, b) => SETUP_KINDS.indexOf(a.kind) - SETUP_KINDS.indexOf(b.kind));
  return { create, present, checklist };
}

/** --strict: a checklist that is not empty stops everything before the first write. */
export function assertNothingMissing(checklist: readonly ChecklistItem[]): void {
  if (checklist.length === 0) return;
  throw new FerryError(
    'MAPPING_UNKNOWN_NAME',
    `--strict: the account lacks ${checklist.map((c) => `${KIND_WORDS[c.kind]} \`${c.name}\``).join(', ')}, which the interface cannot create; nothing was written`,
    {
      hint: 'Make them in the service (custom fields, task categories, project stages and lost reasons in the account settings, users and teams by inviting them), or leave out --strict to import the other rows.',
    },
  );
}
