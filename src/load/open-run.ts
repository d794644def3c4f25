/**
 * The start every command that reads the account for a run shares (import, run, the dry run,
 * verify): the account's names, read once, with the requests that took and the check of the
 * account's users that binds a state folder to its account. The files come first (plan's
 * prepareRun), then this, then the state folder, which each command opens its own way.
 */
import { type AccountCatalog, type CatalogWanted, type CrmClient, readAccountCatalog } from '../client/index.ts';
import { CatalogResolver, createResolver, type NameResolver } from '../mapping/index.ts';

export interface AccountNames {
  /** The catalog read from the account; null when the caller gave its own resolver. */
  catalog: AccountCatalog | null;
  resolver: NameResolver;
  /** Requests the reading took (0 with a resolver given). */
  requests: number;
  /** The account's user ids, which tell one account from another behind one address (StateDir's `users`). */
  users: () => Promise<number[]>;
}

/**
 * Reads the account's names (users, pipelines, fields, ...) once, unless the caller has a resolver
 * already, or the names themselves (a restore reads them once for all its runs). With `wanted`
 * (catalogWanted of the run's mappings) only the users and the lists the mappings can name.
 */
export async function readNames(client: CrmClient, given?: NameResolver, known?: AccountCatalog, wanted?: CatalogWanted): Promise<AccountNames> {
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
