import type { CrmClient } from '../client/client.ts';
import type { OAuthSession } from '../client/oauth.ts';
import type { CliIo, OptionSpec, ParsedArgs } from './command.ts';

/** The flags every command that talks to the service takes. */
export const connectionFlags: OptionSpec = {
  'base-url': { type: 'string' },
  token: { type: 'string' },
  profile: { type: 'string' },
  verbose: { type: 'boolean' },
};

export const connectionUsage = `Connection:
  --base-url URL    the service's address (or CRM_FERRY_BASE_URL)
  --token TOKEN     a personal API token (or CRM_FERRY_TOKEN); without it the stored OAuth login is used
  --profile NAME    which stored OAuth login to use (default "default")
  --verbose         log every request to stderr (tokens are never shown)`;

export function connectionOptions(args: ParsedArgs): { token?: string; baseUrl?: string; profile?: string; verbose: boolean } {
  const v = args.values;
  const result: { token?: string; baseUrl?: string; profile?: string; verbose: boolean } = { verbose: Boolean(v.verbose) };
  if (typeof v.token === 'string') result.token = v.token;
  if (typeof v['base-url'] === 'string') result.baseUrl = v['base-url'];
  if (typeof v.profile === 'string') result.profile = v.profile;
  return result;
}

/**
 * Connects with the connection flags (and CRM_FERRY_* from the environment). The client's code is
 * loaded only here, so that a command's --help does not wait for it.
 */
export async function connectWith(args: ParsedArgs, io: CliIo): Promise<{ client: CrmClient; session: OAuthSession | null }> {
  const flags = connectionOptions(args);
  const { connect } = await import('../client/connect.ts');
  return connect({ ...flags, env: io.env, ...(flags.verbose ? { log: (line: string) => io.stderr.write(`${line}\n`) } : {}) });
}
