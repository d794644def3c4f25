/**
 * The start every command that reads the account for a run shares (import, run, the dry run,
 * verify): the files (the plan's prepareRun), then the account's names, read once, with the
 * requests that took, then the state folder, bound to the account by the check of its users.
 */
import {
  type AccountCatalog,
  accountOf,
  type CatalogWanted,
  type CrmClient,
  readAccountCatalog,
} from '../client/index.ts';
import { type AccountIdentity, type OpenStateOptions, StateDir } from '../journal/index.ts';
import { CatalogResolver, catalogWanted, createResolver, type NameResolver } from '../mapping/index.ts';
import { type Plan, type PreparedRun, prepareRun, type PrepareRunOptions, type RunSource } from '../plan/index.ts';

export interface AccountNames {
  /** The catalog read from the account; null when the caller gave its own resolver. */
  catalog: AccountCatalog | null;
  resolver: NameResolver;
  /** Requests the reading took (0 with a resolver given). */
  requests: number;
  /** The account's user ids, which tell one account from another behind one address (StateDir's `users`). */
  users: () => Promise<number[]>;
}

/** What readNames may be handed instead of reading, and what it reads. */
export interface ReadNamesOptions {
  /** A resolver the caller has already: nothing is read. */
  resolver?: NameResolver | undefined;
  /** The names themselves (a restore reads them once for all its runs): only the resolver is made. */
  catalog?: AccountCatalog | undefined;
  /** catalogWanted of the run's mappings: only the users and the lists the mappings can name. @default all of them */
  wanted?: CatalogWanted | undefined;
}

/**
 * Reads the account's names (users, pipelines, fields, ...) once, unless the caller has a resolver
 * or the names already (ReadNamesOptions).
 */
export async function readNames(client: CrmClient, options: ReadNamesOptions = {}): Promise<AccountNames> {
  const { resolver: given, catalog: known, wanted } = options;
  const before = client.transport.requestsSent;
  const catalog = given ? null : (known ?? (await readAccountCatalog(client, wanted)));
  const resolver = given ?? createResolver(catalog as AccountCatalog);
  return {
    catalog,
    resolver,
    requests: client.transport.requestsSent - before,
    users: async () => (resolver instanceof CatalogResolver ? resolver.userIds() : []),
  };
}

export interface OpenRunOptions {
  source: RunSource;
  /** How the files are read (rejects, a fixed rejects file, live steps, transforms, a check of the plan). */
  prepare: PrepareRunOptions;
  /**
   * Whether the run needs all of the account's names rather than those its mappings can hold (a
   * plan's set-up creates what the rows name; a caller keeps them for its next runs). @default never
   */
  allNames?: (plan: Plan | null) => boolean;
  /** The state folder: where, which account (the client's own unless said), and how it is opened; its users check comes from the names. */
  state: Omit<OpenStateOptions, 'users' | 'account'> & { account?: AccountIdentity | undefined };
}

/** A run opened: its steps ready to be read, the account's names, and its state folder (locked; close it). */
export interface OpenedRun extends PreparedRun {
  names: AccountNames;
  state: StateDir;
}

/**
 * The one way a run is opened, for import, run, the dry run and verify: the plan or mapping and
 * its inputs (nothing read from the account yet, so a broken file costs no request), the account's
 * names, then the state folder, whose account and users are checked before anything is written.
 */
export async function openRun(
  options: OpenRunOptions,
  deps: { client: CrmClient; resolver?: NameResolver | undefined; catalog?: AccountCatalog | undefined },
): Promise<OpenedRun> {
  const prepared = await prepareRun(options.source, options.prepare);
  const wanted = options.allNames?.(prepared.plan)
    ? undefined
    : catalogWanted(prepared.steps.map((step) => step.mapping));
  const names = await readNames(deps.client, { resolver: deps.resolver, catalog: deps.catalog, wanted });
  const state = await StateDir.open({
    ...options.state,
    account: options.state.account ?? accountOf(deps.client),
    users: names.users,
  });
  return { ...prepared, names, state };
}
