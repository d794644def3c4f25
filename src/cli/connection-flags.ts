import type { ConnectOptions, CrmClient, OAuthSession } from '../client/index.ts';
import { FerryError } from '../errors/index.ts';
import type { AccountIdentity } from '../journal/index.ts';
import type { CliIo, OptionSpec, ParsedArgs } from './command.ts';

const CONNECTION = 'Connection (each flag, else the CRM_FERRY_* variable named):';

/** The flags every command that talks to the service takes, in their own group of `--help`. */
export const connectionFlags: OptionSpec = {
  'base-url': {
    type: 'string',
    value: 'URL',
    describe: "the service's address (CRM_FERRY_BASE_URL)",
    group: CONNECTION,
  },
  token: {
    type: 'string',
    value: 'TOKEN',
    describe: 'a personal API token (CRM_FERRY_TOKEN); without it the stored OAuth login is used',
    group: CONNECTION,
  },
  profile: {
    type: 'string',
    value: 'NAME',
    describe: 'which stored OAuth login to use (CRM_FERRY_PROFILE; default "default")',
    group: CONNECTION,
  },
  verbose: {
    type: 'boolean',
    describe: 'log every request to stderr, tokens never shown (CRM_FERRY_VERBOSE=1)',
    group: CONNECTION,
  },
  'state-store': {
    type: 'string',
    value: 'URL',
    describe:
      "keep state and the account's shared quota in PostgreSQL, postgresql://USER@HOST/DB (CRM_FERRY_STATE_STORE; default: the state folder, quota paced by this process alone)",
    group: CONNECTION,
  },
};

/** Each connection flag and the environment variable that stands in for it when the flag is not given. */
const FROM_ENVIRONMENT = {
  'base-url': 'CRM_FERRY_BASE_URL',
  token: 'CRM_FERRY_TOKEN',
  profile: 'CRM_FERRY_PROFILE',
  verbose: 'CRM_FERRY_VERBOSE',
  'state-store': 'CRM_FERRY_STATE_STORE',
} as const;

export interface ConnectionSettings {
  token?: string;
  baseUrl?: string;
  profile?: string;
  verbose: boolean;
  /** The PostgreSQL state store's address (`--state-store`), when the state is kept there. */
  stateStore?: string;
}

/**
 * The connection settings from the flags, or else from CRM_FERRY_* in the environment: one rule for
 * every command. (Not yargs's `.env()`: that would let any CRM_FERRY_* variable set any option of
 * any command, `CRM_FERRY_YES=1` confirming a --fresh start, and it reads only process.env.)
 */
export function connectionOptions(args: ParsedArgs, env: NodeJS.ProcessEnv = {}): ConnectionSettings {
  const value = (flag: keyof typeof FROM_ENVIRONMENT): string | boolean | undefined => {
    const given = args.values[flag];
    // `--token ''` (a variable that expanded to nothing): said, rather than falling back to a stored login.
    if (given === '')
      throw new FerryError('USAGE', `--${flag} is empty`, {
        hint: `Give --${flag} a value, or leave it out (then ${FROM_ENVIRONMENT[flag]} is read).`,
      });
    if (typeof given === 'string' || typeof given === 'boolean') return given;
    const fromEnv = env[FROM_ENVIRONMENT[flag]];
    return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
  };
  const verbose = value('verbose');
  const result: ConnectionSettings = {
    verbose: verbose === true || verbose === '1' || verbose === 'true',
  };
  const token = value('token');
  const baseUrl = value('base-url');
  const profile = value('profile');
  if (typeof token === 'string') result.token = token;
  if (typeof baseUrl === 'string') result.baseUrl = baseUrl;
  if (typeof profile === 'string') result.profile = profile;
  const stateStore = value('state-store');
  if (typeof stateStore === 'string') result.stateStore = stateStore;
  return result;
}

/**
 * Connects with the connection flags (and CRM_FERRY_* from the environment). The client's code is
 * loaded only here, so that a command's --help does not wait for it. With a state store
 * (`--state-store`), the account's rate budget is shared through it with every other process
 * writing to the account; the client's close() gives back its connection.
 */
export async function connectWith(
  args: ParsedArgs,
  io: CliIo,
  transport?: ConnectOptions['transport'],
): Promise<{ client: CrmClient; session: OAuthSession | null }> {
  // The state itself is not the client's: the commands that keep state open the store (see stateStoreOf).
  const { stateStore, ...flags } = connectionOptions(args, io.env);
  const { connect } = await import('../client/index.ts');
  const quota = stateStore ? await (await import('../journal/index.ts')).PostgresQuota.open({ url: stateStore }) : null;
  try {
    return await connect({
      ...flags,
      env: io.env,
      signal: io.signal,
      ...(flags.verbose ? { log: (line: string) => io.stderr.write(`${line}\n`) } : {}),
      ...(transport ? { transport } : {}),
      ...(quota ? { sharedBudget: (account: AccountIdentity) => quota.budgetFor(account.account) } : {}),
    });
  } catch (error) {
    await quota?.close();
    throw error;
  }
}
