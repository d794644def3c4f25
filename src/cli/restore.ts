import type { RestoreSummary } from '../backup/index.ts';
import { EXIT } from '../errors/index.ts';
import { refuseArguments, type Command } from './command.ts';
import { connectionFlags, connectWith } from './connection-flags.ts';
import { accountOf } from '../client/index.ts';
import { path, stateKeyFlag, stateStoreOf, wholeNumber } from './flags.ts';
import { formatImportSummary, ImportProgress, importExitCode } from './import-report.ts';
import { formatCount } from '../util/index.ts';

export function formatRestoreLinks(summary: RestoreSummary): string {
  const { kaseParties, tracks } = summary.links;
  const { carried, leftOut, present } = summary.entries;
  const lines = [
    `Links: ${kaseParties} additional parties of projects carried; ${tracks.onCreate + tracks.ofParties} tracks applied (${tracks.onCreate} as their project or opportunity was created, ${tracks.ofParties} to parties)${tracks.onFound ? `, ${tracks.onFound} left to the records found in the account` : ''}${tracks.unresolved ? `, ${tracks.unresolved} not carried (record not restored, or its definition renamed since)` : ''}.`,
  ];
  if (summary.lookedAt.records > 0)
    lines.push(
      `Found in the account: ${summary.lookedAt.records} records the backup holds (matched, not added again); of their entries and tasks ${present.entries} entries and ${present.tasks} tasks were there already (${summary.lookedAt.requests} requests to look).`,
    );
  lines.push(
    `In all: ${formatCount(summary.requests)} requests (the importer's, ${summary.lookedAt.requests} to look at what the records found hold, ${tracks.ofParties} for the tracks of parties).`,
  );
  if (carried.emails + carried.taskEntries > 0)
    lines.push(
      `Carried as notes (the interface creates only notes): ${carried.emails} emails, ${carried.taskEntries} entries of completed tasks, each headed by what it was.`,
    );
  if (leftOut.taskEntries > 0)
    lines.push(
      `Left out: ${leftOut.taskEntries} entries of completed tasks, which the service filed again when their tasks were restored completed.`,
    );
  if (summary.missing.length > 0)
    lines.push(
      `Restored without ${summary.missing.length} item${summary.missing.length === 1 ? '' : 's'} the target lacks (--allow-missing): ${summary.missing.map((m) => `${m.kind} ${m.name}`).join('; ')}.`,
    );
  lines.push(
    `The plan is ${summary.plan}: verify with 'crm-ferry verify ${summary.plan} --state-dir ${summary.stateDir}', undo the whole restore with 'crm-ferry rollback ${summary.plan} --state-dir ${summary.stateDir} --all' (a restore is at least two runs, records then entries and tasks; the configuration its set-up created goes too).`,
  );
  return `${lines.join('\n')}\n`;
}

/** The summary as one JSON object (`--json`): the error that stopped the import as its code and message. */
export function restoreSummaryJson(summary: RestoreSummary): string {
  const stopped = summary.import.stopped
    ? { code: summary.import.stopped.code, message: summary.import.stopped.message }
    : null;
  return `${JSON.stringify({ ...summary, import: { ...summary.import, stopped } })}\n`;
}

export const restoreCommand: Command = {
  name: 'restore',
  usage: `Usage: crm-ferry restore DIR [--allow-missing] [--state-dir DIR] [--json] [connection]

Writes a backup folder (crm-ferry backup) into the account connected to, through the importer:
exactly once, resumable (run the same command again), undone with rollback. The whole backup is
checked first, before any request (docs/backup.md: what is checked). Records get new ids;
every link is made again by the backed-up ids. Creates the pipelines, milestones, activity types
and track definitions the account lacks; first lists what it cannot create (custom fields, task
categories, users, teams) and stops unless --allow-missing. Records the account has already
(same name; people by e-mail address, else name) are updated, not added again, and their entries
and tasks that are there are left out: a second restore, with any state folder, adds nothing.`,
  epilog: `Exit code 0 done, 2 bad usage, an incomplete backup or missing configuration, 3 some rows
rejected, 4 the service refused or could not be reached, 130 interrupted (run the same command
again to continue).`,
  options: {
    'allow-missing': {
      type: 'boolean',
      describe:
        'restore even when the account lacks configuration the backup refers to (missing owners and teams are left out with a warning; the importer reports what else a row lacks)',
    },
    'state-dir': {
      type: 'string',
      value: 'DIR',
      describe:
        "the importer's state folder (default: DIR/restore/state); the restore's inputs then go beside it, in STATE-inputs",
    },
    ...stateKeyFlag,
    concurrency: { type: 'string', value: 'N', describe: 'requests under way at once (default 8)' },
    json: { type: 'boolean', describe: 'the summary as one JSON object on stdout (no progress)' },
    ...connectionFlags,
  },
  async run(args, io) {
    refuseArguments('restore', args, ['DIR']);
    const { FerryError } = await import('../errors/index.ts');
    const from = path(args.positionals[0], io.cwd);
    if (from === undefined)
      throw new FerryError('USAGE', 'restore needs DIR, the folder of a backup (crm-ferry backup --out DIR)');
    const stateDir = path(args.values['state-dir'], io.cwd) ?? null;
    const concurrency = wholeNumber(args.values.concurrency, '--concurrency', 1, 64) ?? 8;
    const { runRestore } = await import('../backup/index.ts');
    const { client, session } = await connectWith(args, io);
    const json = Boolean(args.values.json);
    const tty = io.stderr === process.stderr && Boolean(process.stderr.isTTY);
    const progress = new ImportProgress(io.stderr, tty ? 'tty' : 'lines');
    try {
      const summary = await runRestore(
        {
          from,
          stateDir,
          stateStore: stateStoreOf(args, io.env, accountOf(client, session?.subdomain), from),
          allowMissing: Boolean(args.values['allow-missing']),
          concurrency,
        },
        {
          client,
          account: accountOf(client, session?.subdomain),
          signal: io.signal,
          ...(json ? {} : { onEvent: progress.onEvent }),
        },
      );
      progress.finish();
      if (json) {
        io.stdout.write(restoreSummaryJson(summary));
        if (summary.import.stopped) throw summary.import.stopped;
        return summary.interrupted ? EXIT.INTERRUPTED : importExitCode(summary.import);
      }
      io.stdout.write(formatImportSummary(summary.import, io.cwd));
      if (summary.import.stopped) throw summary.import.stopped;
      if (summary.interrupted) return EXIT.INTERRUPTED;
      io.stdout.write(formatRestoreLinks(summary));
      return importExitCode(summary.import);
    } finally {
      await client.close();
    }
  },
};
