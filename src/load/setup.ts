/** Set-up as a run and the `setup` command do it: plan, then apply (or only print, in a dry run). */
import { type CrmClient, readAccountCatalog } from '../client/index.ts';
import type { AccountIdentity, StateStoreOptions } from '../journal/index.ts';
import {
  type AccountCatalog,
  type CatalogResolver,
  type CompiledMapping,
  createResolver,
  type TransformRegistry,
} from '../mapping/index.ts';
import { type PreparedStep, prepareRun, type SetupSpec } from '../plan/index.ts';
import { openRun } from './open-run.ts';
import { type ApplySetupDeps, applySetup, withItems } from './setup-apply.ts';
import { type SetupPlan, type SetupReport, collectNames, planSetup, assertNothingMissing } from './setup-plan.ts';

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
export async function setupForRun(
  options: SetupForRunOptions,
  deps: ApplySetupDeps,
): Promise<{ report: SetupReport; resolver: CatalogResolver | null; catalog: AccountCatalog }> {
  const catalog = options.catalog ?? (await readAccountCatalog(deps.client));
  const needs = await collectNames(options.steps, options.compiled, options.signal);
  const plan = planSetup(options.spec, needs, catalog);
  options.onPlan?.(plan);
  if (options.strict) assertNothingMissing(plan.checklist);
  // A dry run creates nothing, but its rows are mapped as if it had: the planned names resolve.
  if (options.dryRun)
    return {
      report: { ...plan, created: [], dryRun: true },
      resolver: createResolver(withPlanned(catalog, plan)),
      catalog,
    };
  await deps.state.writeSteps([]);
  // Pending intents of an interrupted set-up are settled even when nothing is left to create.
  const applied = await applySetup(plan, catalog, deps);
  return {
    report: { ...plan, created: applied.created, dryRun: false },
    resolver: createResolver(applied.catalog),
    catalog: applied.catalog,
  };
}

/**
 * `validate --online` of a plan with `setup:`: the account as the set-up would leave it (what it
 * would create resolves), so that validate rejects what the run would, and the set-up's plan for
 * its checklist. Null for a plan without `setup:`.
 */
export async function plannedSetup(
  planFile: string,
  client: CrmClient,
  signal?: AbortSignal,
  transforms?: TransformRegistry,
): Promise<{ resolver: CatalogResolver; plan: SetupPlan } | null> {
  const { plan: loaded, steps, compiled } = await prepareRun({ kind: 'plan', planFile }, { transforms });
  if (!loaded?.setup) return null;
  const catalog = await readAccountCatalog(client);
  const plan = planSetup(loaded.setup, await collectNames(steps, compiled, signal), catalog);
  return { resolver: createResolver(withPlanned(catalog, plan)), plan };
}

export interface SetupCommandOptions {
  planFile: string;
  stateDir: string;
  /** Where the state is kept besides the folder (`--state-store`, its key). @default the folder alone */
  stateStore?: StateStoreOptions | null | undefined;
  dryRun?: boolean;
  strict?: boolean;
}

/**
 * `crm-ferry setup PLAN`: the plan's set-up alone, in the plan's state folder (so that a later
 * `run` and `rollback` know it). A plan without `setup:` derives everything.
 */
export async function runSetup(
  options: SetupCommandOptions,
  deps: {
    client: CrmClient;
    account?: AccountIdentity | undefined;
    signal?: AbortSignal;
    onPlan?: (plan: SetupPlan) => void;
    transforms?: TransformRegistry;
  },
): Promise<SetupReport> {
  // Opened as a run is, with all of the account's names (the set-up creates what the rows name and
  // the account lacks); the state is the account's, checked by its users.
  const { plan, steps, compiled, names, state } = await openRun(
    {
      source: { kind: 'plan', planFile: options.planFile },
      prepare: { transforms: deps.transforms },
      allNames: () => true,
      state: {
        dir: options.stateDir,
        account: deps.account,
        keepUsers: !options.dryRun,
        store: options.stateStore ?? undefined,
      },
    },
    { client: deps.client },
  );
  const catalog = names.catalog as AccountCatalog;
  try {
    const spec = plan?.setup ?? {
      derive: true,
      pipelines: [],
      milestones: [],
      activityTypes: [],
      trackDefinitions: [],
    };
    const forRun: SetupForRunOptions = {
      spec,
      steps,
      compiled,
      dryRun: options.dryRun ?? false,
      strict: options.strict ?? false,
      catalog,
    };
    if (deps.signal) forRun.signal = deps.signal;
    if (deps.onPlan) forRun.onPlan = deps.onPlan;
    const { report } = await setupForRun(forRun, { client: deps.client, state, run: state.newRunId() });
    return report;
  } finally {
    await state.close();
  }
}
