/**
 * Set-up, applying: creates what a plan says, each creation journalled in the `_setup` step before
 * and after it is sent, so that a run killed half-way neither creates twice nor loses an id.
 */
import { type CrmClient } from '../client/index.ts';
import { FerryError } from '../errors/index.ts';
import { StateDir } from '../journal/index.ts';
import { type AccountCatalog } from '../mapping/index.ts';
import { SETUP_KINDS, type SetupKind } from './setup-kinds.ts';
import { type Body, type SetupItem, type SetupPlan, type SetupReport, norm } from './setup-plan.ts';

/** Where each kind is created and deleted (a pipeline's DELETE archives it). */
export const SETUP_API: Record<SetupKind, { path: string; one: string }> = {
  pipeline: { path: '/pipelines', one: 'pipeline' },
  milestone: { path: '/milestones', one: 'milestone' },
  activityType: { path: '/activitytypes', one: 'activityType' },
  trackDefinition: { path: '/trackdefinitions', one: 'trackDefinition' },
};

/** The set-up journal sits beside the steps' (as step `_setup`); a step name cannot start with `_`, so it never meets one. */
export const SETUP_STEP = '_setup';

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

export function isIntentBody(body: Body | null | undefined): body is SetupIntentBody {
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
export async function applySetup(
  plan: SetupPlan,
  catalog: AccountCatalog,
  deps: ApplySetupDeps,
): Promise<{ created: SetupReport['created']; catalog: AccountCatalog }> {
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
        await writer.append({
          t: 'done',
          k: row.key,
          op: 'create',
          run: intent.run,
          at: now().toISOString(),
          id,
          fp: '',
          origin: 'created',
        });
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
        if (pipelineId === undefined)
          throw new FerryError(
            'INTERNAL',
            `set-up: the pipeline ${item.pipeline} of milestone ${item.name} was neither found nor created`,
          );
        body.pipeline = { id: pipelineId };
      }
      const intentBody: SetupIntentBody = { kind: item.kind, name: item.name, pipeline: item.pipeline, request: body };
      await writer.append({
        t: 'intent',
        k: item.key,
        op: 'create',
        run: deps.run,
        at: now().toISOString(),
        fp: '',
        body: intentBody,
      });
      const { path, one } = SETUP_API[item.kind];
      const answer = await deps.client.transport.request({ method: 'POST', path, json: { [one]: body } });
      const id = ((answer.body as Body | null)?.[one] as Body | undefined)?.id;
      if (typeof id !== 'number')
        throw new FerryError('API_RESPONSE_INVALID', `POST ${path}: the answer has no ${one}.id`);
      await writer.append({
        t: 'done',
        k: item.key,
        op: 'create',
        run: deps.run,
        at: now().toISOString(),
        id,
        fp: '',
        origin: 'created',
      });
      if (item.kind === 'pipeline') pipelineIds.set(norm(item.name), id);
      created.push({ kind: item.kind, name: item.name, id });
      made.push({ ...item, id });
    }
  } finally {
    await writer.close();
  }
  return { created, catalog: withItems(catalog, made) };
}

/** The catalog with set-up's items added: created ones under their ids, planned ones under made-up ids. */
export function withItems(catalog: AccountCatalog, items: ReadonlyArray<SetupItem & { id: number }>): AccountCatalog {
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
