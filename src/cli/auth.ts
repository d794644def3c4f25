import { spawn } from 'node:child_process';
import type { CredentialStore } from '../client/index.ts';
import { FerryError } from '../errors/index.ts';
import { refuseArguments, type CliIo, type Command, type ParsedArgs } from './command.ts';
import { connectionOptions } from './connection-flags.ts';

const SCOPES = new Set(['read', 'read write', 'read write user_preference']);

/** --profile, else CRM_FERRY_PROFILE (as for every other command), else "default": logout must end the login the others use. */
function profileOf(args: ParsedArgs, env: NodeJS.ProcessEnv): string {
  return connectionOptions(args, env).profile ?? 'default';
}

/** The credentials file; the client's code is loaded only when a command needs it. */
async function storeOf(io: CliIo): Promise<CredentialStore> {
  const { CredentialStore, defaultCredentialsPath } = await import('../client/index.ts');
  return new CredentialStore(defaultCredentialsPath(io.env));
}

/** Opens a URL in the person's browser where the machine has one; failure is silent (the URL is printed). */
export function openBrowser(url: string): void {
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  try {
    const child = spawn(command, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // No browser opener: the printed URL is enough.
  }
}

export const authLoginCommand: Command = {
  name: 'auth login',
  usage: `Usage: crm-ferry auth login --client-id ID [options]

Runs the OAuth authorisation code flow: prints (and opens) the approval page, waits for the
redirect on a loopback address, and stores the tokens in the credentials file (mode 0600).`,
  options: {
    'client-id': { type: 'string', value: 'ID', describe: "the registered application's client id (required)" },
    'client-secret': {
      type: 'string',
      value: 'SECRET',
      describe: 'the client secret (web applications; installed ones have none)',
    },
    scope: {
      type: 'string',
      value: 'SCOPE',
      describe: '"read", "read write" (default) or "read write user_preference"',
    },
    'redirect-uri': {
      type: 'string',
      value: 'URI',
      describe: 'the registered loopback redirect URI (default http://127.0.0.1:8976/callback)',
    },
    'base-url': { type: 'string', value: 'URL', describe: "the service's address (or CRM_FERRY_BASE_URL)" },
    profile: {
      type: 'string',
      value: 'NAME',
      describe: 'store the login under this name (CRM_FERRY_PROFILE; default "default")',
    },
    'no-browser': { type: 'boolean', describe: 'only print the URL (for a machine without a browser)' },
  },
  async run(args, io) {
    refuseArguments('auth login', args);
    const v = args.values;
    const clientId = v['client-id'];
    if (typeof clientId !== 'string' || clientId === '') throw new FerryError('USAGE', 'auth login needs --client-id');
    const baseUrl = (v['base-url'] as string | undefined) ?? (io.env.CRM_FERRY_BASE_URL || undefined);
    if (!baseUrl)
      throw new FerryError('CONFIG_MISSING', 'no base address of the service', {
        hint: 'Pass --base-url or set CRM_FERRY_BASE_URL.',
      });
    const redirectUri = (v['redirect-uri'] as string | undefined) ?? 'http://127.0.0.1:8976/callback';
    const scope = (v.scope as string | undefined) ?? 'read write';
    if (!SCOPES.has(scope))
      throw new FerryError(
        'USAGE',
        `--scope must be "read", "read write" or "read write user_preference", got ${JSON.stringify(scope)}`,
      );
    const config = { baseUrl, clientId, clientSecret: (v['client-secret'] as string | undefined) ?? '' };
    const { loginWithBrowser, profileFromAnswer } = await import('../client/index.ts');
    const answer = await loginWithBrowser({
      ...config,
      scope,
      redirectUri,
      signal: io.signal,
      showUrl: (url) => {
        io.stdout.write(`Open this address in a browser and approve access:\n  ${url}\n`);
        if (!v['no-browser']) openBrowser(url);
      },
    });
    const profile = profileOf(args, io.env);
    const store = await storeOf(io);
    await store.put(profile, profileFromAnswer(config, answer, Date.now()));
    io.stdout.write(
      `Logged in to ${baseUrl} with scope "${answer.scope}"; tokens stored in ${store.file} (profile "${profile}").\n`,
    );
    return 0;
  },
};

export const authStatusCommand: Command = {
  name: 'auth status',
  usage: `Usage: crm-ferry auth status [--profile NAME]

Shows the stored login of the profile, refreshing the access token if needed, and who it is.`,
  options: {
    profile: {
      type: 'string',
      value: 'NAME',
      describe: 'the stored login to show (CRM_FERRY_PROFILE; default "default")',
    },
  },
  async run(args, io) {
    refuseArguments('auth status', args);
    const profile = profileOf(args, io.env);
    const { connect } = await import('../client/index.ts');
    const { client, session } = await connect({ profile, env: { ...io.env, CRM_FERRY_TOKEN: '' } });
    try {
      if (!session) throw new FerryError('INTERNAL', 'a stored login was expected');
      await session.token();
      const stored = session.current();
      const users = await client.users();
      io.stdout.write(
        [
          `profile:  ${profile}`,
          `service:  ${stored.baseUrl}${stored.subdomain ? ` (account ${stored.subdomain})` : ''}`,
          `client:   ${stored.clientId}`,
          `scope:    ${stored.scope}`,
          `expires:  ${new Date(stored.expiresAt).toISOString()} (refreshed automatically)`,
          `users:    ${users.length} in the account`,
        ].join('\n') + '\n',
      );
      return 0;
    } finally {
      await client.close();
    }
  },
};

export const authLogoutCommand: Command = {
  name: 'auth logout',
  usage: `Usage: crm-ferry auth logout [--profile NAME]

Revokes the stored refresh token at the service (which also ends its access tokens) and removes
the profile from the credentials file.`,
  options: {
    profile: {
      type: 'string',
      value: 'NAME',
      describe: 'the stored login to end (CRM_FERRY_PROFILE; default "default")',
    },
  },
  async run(args, io) {
    refuseArguments('auth logout', args);
    const profile = profileOf(args, io.env);
    const store = await storeOf(io);
    const stored = await store.get(profile);
    if (!stored) {
      io.stdout.write(`No stored login under profile "${profile}".\n`);
      return 0;
    }
    const { revokeToken } = await import('../client/index.ts');
    await revokeToken(
      { baseUrl: stored.baseUrl, clientId: stored.clientId, clientSecret: stored.clientSecret },
      stored.refreshToken,
    );
    await store.remove(profile);
    io.stdout.write(`Revoked and removed the login of profile "${profile}".\n`);
    return 0;
  },
};
