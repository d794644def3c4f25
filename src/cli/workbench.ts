import { listenError } from './sandbox.ts';
import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { EXIT, FerryError } from '../errors/index.ts';
import { refuseArguments, type Command } from './command.ts';
import { connectionFlags, connectionOptions, connectWith } from './connection-flags.ts';
import { accountOf } from '../client/index.ts';
import { DEFAULT_GIVE_UP_AFTER_MS, stateKeyFlag, stateStoreOf, wholeNumber } from './flags.ts';
import { version } from './version.ts';
import type { EngineWords } from '../workbench/index.ts';

/** The command line's words for what a run, a verify and a rollback did, for the workbench's page. */
export async function workbenchWords(): Promise<EngineWords> {
  const { formatImportSummary, formatRollbackSummary } = await import('./import-report.ts');
  const { recordUsage, shownPath } = await import('./report-flag.ts');
  const { verifyOutcome } = await import('../report/index.ts');
  return {
    runOutcome: (summary, cwd, liveReads) =>
      formatImportSummary(summary, cwd, liveReads).trimEnd().split('\n').at(-1) ?? '',
    rollbackLines: (summary, dryRun) => formatRollbackSummary(summary, dryRun).trimEnd().split('\n'),
    verifyOutcome,
    recordUsage,
    shownPath,
  };
}

/** How long the workbench waits, as it starts, for the account to list its users. */
const ACCOUNT_CHECK_MS = 30_000;

export const workbenchCommand: Command = {
  name: 'workbench',
  usage: `Usage: crm-ferry workbench [DIR] [--port N] [--open] [connection]

Opens a customer's migration in the browser: the input files of DIR (default: the current folder),
their mappings as tables with the first rows mapped, the check of every row, the run with its
progress, verify and undo. It writes ordinary mapping files and a plan.yaml into DIR and runs
through the same engine and state folder as \`crm-ferry run plan.yaml\`, which goes on from
whatever the workbench did.

Listens on 127.0.0.1 only and prints one address holding a random session secret: only a browser
that opened it gets in. The run is held by the workbench, not the page: closing the tab does not
stop it. Ctrl-C stops a run under way as it stops \`crm-ferry run\`, then the workbench.`,
  epilog:
    'Exit code 0 when closed with Ctrl-C after any run stopped cleanly, 2 for bad usage or a folder that cannot be used.',
  options: {
    port: { type: 'string', value: 'N', describe: 'the port on 127.0.0.1 (default: any free port)' },
    open: { type: 'boolean', describe: 'open the address in the browser' },
    ...stateKeyFlag,
    ...connectionFlags,
  },
  async run(args, io) {
    refuseArguments('workbench', args, ['DIR']);
    const given = args.positionals[0] ?? '.';
    const dir = isAbsolute(given) ? given : resolve(io.cwd, given);
    const info = await stat(dir).catch(() => null);
    if (!info?.isDirectory())
      throw new FerryError('USAGE', `${given} is not a folder`, {
        hint: "Give the project folder: where the customer's files are (it may be empty).",
      });
    const port = wholeNumber(args.values.port, 'port', 0, 65535) ?? 0;
    const { client, session } = await connectWith(args, io, {
      connections: 8,
      giveUpAfterMs: DEFAULT_GIVE_UP_AFTER_MS,
    });
    try {
      const account = accountOf(client, session?.subdomain);
      const flags = connectionOptions(args, io.env);
      const stored = session?.current();
      const user = stored
        ? `the stored login of profile ${JSON.stringify(flags.profile ?? 'default')}${stored.subdomain ? ` (account ${stored.subdomain})` : ''}`
        : `a personal API token from ${args.values.token !== undefined ? '--token' : 'CRM_FERRY_TOKEN'}`;
      // Whether the account answers: said on the page (and here) rather than found at the first run.
      // Asked for ACCOUNT_CHECK_MS at most, and given up on Ctrl-C: an account that does not answer
      // is said on the page, not waited for through the run's --give-up-after.
      let problem: string | null = null;
      let users = 0;
      const asked = AbortSignal.any([io.signal, AbortSignal.timeout(ACCOUNT_CHECK_MS)]);
      try {
        users = (await client.users({ signal: asked })).length;
      } catch (error) {
        if (io.signal.aborted) return EXIT.INTERRUPTED;
        problem = asked.aborted
          ? `no answer from ${account.baseUrl} within ${ACCOUNT_CHECK_MS / 1000} s`
          : error instanceof FerryError
            ? error.message
            : String(error);
      }
      const { Engine, Project, startWorkbenchServer } = await import('../workbench/index.ts');
      const accountView = {
        address: account.baseUrl,
        user: problem === null ? `${user}; ${users} user${users === 1 ? '' : 's'} in the account` : user,
        problem,
      };
      const engine = new Engine({
        words: await workbenchWords(),
        project: new Project(dir),
        client,
        account,
        accountView,
        v1Token: io.env.CRM_FERRY_V1_TOKEN || undefined,
        version: version(),
        // A project's state in a store is known by the project folder's name and the account.
        stateStore: stateStoreOf(args, io.env, account, dir),
      });
      const server = await startWorkbenchServer({
        engine,
        port,
        session: { dir: given, account: accountView, plan: 'plan.yaml', version: version() },
        onBug: (error) =>
          io.stderr.write(
            `internal error in the workbench (a bug in crm-ferry; please report it): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
          ),
      }).catch((error: unknown) => listenError(error, { port, host: '127.0.0.1' }));
      io.stdout.write(`Workbench for ${given} on ${account.baseUrl}: open\n  ${server.url}\n`);
      if (problem !== null) io.stderr.write(`The account did not answer: ${problem}\n`);
      if (args.values.open) {
        const { openBrowser } = await import('./auth.ts');
        openBrowser(server.url);
      }
      io.stdout.write('Ctrl-C stops it.\n');
      await new Promise<void>((done) => {
        if (io.signal.aborted) done();
        else io.signal.addEventListener('abort', () => done(), { once: true });
      });
      io.stderr.write('Stopping: a run under way stops as after Ctrl-C, its state kept.\n');
      await server.close();
      return EXIT.OK;
    } finally {
      await client.close();
    }
  },
};
