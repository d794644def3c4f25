import type { Dispatcher } from 'undici';
import { FerryError } from '../errors/index.ts';
import type { AccountIdentity } from '../journal/index.ts';
import { checkBaseUrl } from '../util/index.ts';
import { CrmClient } from './client.ts';
import { CredentialStore, defaultCredentialsPath } from './credentials.ts';
import { OAuthSession } from './oauth.ts';
import type { SharedBudget } from './shared-budget.ts';
import type { TransportOptions } from './transport.ts';

export interface ConnectOptions {
  /** `--token`; wins over the environment and stored logins. */
  token?: string | undefined;
  /** `--base-url`. */
  baseUrl?: string | undefined;
  /** `--profile`: which stored OAuth login to use. @default 'default' */
  profile?: string | undefined;
  /**
   * Where CRM_FERRY_TOKEN and CRM_FERRY_BASE_URL are read when `token` or `baseUrl` is not given
   * (the command line passes `process.env`). @default {} (a library call reads nothing of the process)
   */
  env?: NodeJS.ProcessEnv;
  /** Where OAuth logins are kept. @default the XDG config path */
  credentialsFile?: string;
  dispatcher?: Dispatcher;
  log?: (line: string) => void;
  transport?: Partial<Pick<TransportOptions, 'retry' | 'connections' | 'timeoutMs' | 'giveUpAfterMs'>>;
  /** The run's stop (Ctrl-C, SIGTERM): ends every wait of the client's requests (TransportOptions.stopSignal). */
  signal?: AbortSignal;
  /**
   * Opens the rate budget of the account connected to, shared with the other processes writing to
   * it (the PostgreSQL state store's); the client's transport closes it (TransportOptions.sharedBudget).
   * @default none: the quota is paced by this process alone
   */
  sharedBudget?: (account: AccountIdentity) => SharedBudget;
}

/** A token travels in a header: a line break or a space in it is a pasting mistake, said before any request. */
function checkToken(token: string): void {
  if (!/^[\x21-\x7e]+$/.test(token)) {
    throw new FerryError(
      'CONFIG_INVALID',
      'the token holds a character a token cannot have (a space, a line break or a non-ASCII character)',
      {
        hint: 'Copy the token again, without the line break at its end (--token or CRM_FERRY_TOKEN).',
      },
    );
  }
}

/**
 * Builds a client from the sources a person can give credentials in, strongest first: `--token`,
 * `CRM_FERRY_TOKEN`, then the stored OAuth login of `--profile`. The base address comes from
 * `--base-url`, `CRM_FERRY_BASE_URL`, or the stored login.
 */
export async function connect(options: ConnectOptions): Promise<{ client: CrmClient; session: OAuthSession | null }> {
  const env = options.env ?? {};
  const token = options.token ?? (env.CRM_FERRY_TOKEN || undefined);
  let baseUrl = options.baseUrl ?? (env.CRM_FERRY_BASE_URL || undefined);
  const profileName = options.profile ?? 'default';
  let session: OAuthSession | null = null;
  let auth: TransportOptions['auth'];
  if (token) {
    auth = token;
  } else {
    const store = new CredentialStore(options.credentialsFile ?? defaultCredentialsPath(env));
    const stored = await store.get(profileName);
    if (!stored) {
      throw new FerryError('CONFIG_MISSING', 'no credentials: give --token, set CRM_FERRY_TOKEN, or log in', {
        hint: `Run \`crm-ferry auth login --client-id ID${profileName === 'default' ? '' : ` --profile ${profileName}`}\`, or pass a personal token.`,
      });
    }
    baseUrl ??= stored.baseUrl;
    session = new OAuthSession(
      stored,
      store,
      profileName,
      options.dispatcher ? { dispatcher: options.dispatcher } : {},
    );
    auth = session;
  }
  if (!baseUrl) {
    throw new FerryError('CONFIG_MISSING', 'no base address of the service', {
      hint: 'Pass --base-url https://YOUR-ACCOUNT.example.com or set CRM_FERRY_BASE_URL (the sandbox prints its own).',
    });
  }
  checkBaseUrl(baseUrl);
  if (token) checkToken(token);
  const transportOptions: TransportOptions = { baseUrl, auth, ...(options.transport ?? {}) };
  if (options.dispatcher) transportOptions.dispatcher = options.dispatcher;
  if (options.log) transportOptions.log = options.log;
  if (options.signal) transportOptions.stopSignal = options.signal;
  if (options.sharedBudget)
    transportOptions.sharedBudget = options.sharedBudget(accountAt(new URL(baseUrl).origin, session?.subdomain));
  return { client: new CrmClient(transportOptions), session };
}

/**
 * The account a run's state belongs to: the service's address, and the account behind a stored
 * login (its subdomain, from `session.subdomain`). A state folder written for one account is
 * refused for another.
 */
export function accountOf(client: CrmClient, subdomain?: string): AccountIdentity {
  return accountAt(client.transport.origin, subdomain);
}

function accountAt(origin: string, subdomain: string | undefined): AccountIdentity {
  return { baseUrl: origin, account: subdomain ? `${subdomain}@${origin}` : origin };
}
