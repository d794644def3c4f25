import type { RestoreSummary } from '../backup/index.ts';
import { EXIT } from '../errors/index.ts';
import { refuseArguments, type Command } from './command.ts';
import { connectionFlags, connectWith } from './connection-flags.ts';
import { accountOf, path, wholeNumber } from './import.ts';
import { formatImportSummary, ImportProgress, importExitCode } from './import-report.ts';

export function formatRestoreLinks(summary: RestoreSummary): string {
  const { kaseParties, tracks } = summary.links;
  const lines = [
    `Links: ${kaseParties.added} additional parties of projects added (${kaseParties.present} there already${kaseParties.unresolved ? `, ${kaseParties.unresolved} whose project or party was not restored` : ''}); ${tracks.added} tracks applied (${tracks.present} there already${tracks.unresolved ? `, ${tracks.unresolved} whose record or track definition is missing` : ''}).`,
  ];
  if (summary.leftOut.entries > 0) lines.push(`Left out: ${summary.leftOut.entries} entries that are not notes (emails, completed-task entries): the interface creates only notes.`);
  if (summary.missing.length > 0) lines.push(`Restored without ${summary.missing.length} item${summary.missing.length === 1 ? '' : 's'} the target lacks (--allow-missing): ${summary.missing.map((m) => `${m.kind} ${m.name}`).join('; ')}.`);
  lines.push(`The plan is ${summary.plan}: verify with 'crm-ferry verify ${summary.plan} --state-dir ${summary.stateDir}', undo with 'crm-ferry rollback ${summary.plan} --state-dir ${summary.stateDir}'.`);
  return `${lines.join('\n')}\n`;
}

export const restoreCommand: Command = {
  name: 'restore',
  usage: `Usage: crm-ferry restore DIR [--allow-missing] [--state-dir DIR] [connection]

Writes a backup folder (crm-ferry backup) into the account connected to, through the importer:
exactly once, resumable (run the same command again), undone with rollback. Records get new ids;
every link is made again by the backed-up ids. First lists the configuration the account lacks
(custom fields, task categories, users, teams, pipelines, milestones, activity types, track
definitions) and stops unless --allow-missing. A second restore changes nothing.`,
  epilog: `Exit code 0 done, 2 bad usage, an incomplete backup or missing configuration, 3 some rows
rejected, 4 the service refused or could not be reached, 130 interrupted (run the same command
again to continue).`,
  options: {
    'allow-missing': { type: 'boolean', describe: 'restore even when the account lacks configuration the backup refers to (missing owners and teams are left out with a warning; the importer reports what else a row lacks)' },
    'state-dir': { type: 'string', value: 'DIR', describe: "the importer's state folder (default: DIR/restore/state)" },
    concurrency: { type: 'string', value: 'N', describe: 'requests under way at once (default 8)' },
    ...connectionFlags,
  },
  async run(args, io) {
    refuseArguments('restore', args, ['DIR']);
    const { FerryError } = await import('../errors/index.ts');
    const from = path(args.positionals[0], io.cwd);
    if (from === undefined) throw new FerryError('USAGE', 'restore needs DIR, the folder of a backup (crm-ferry backup --out DIR)');
    const stateDir = path(args.values['state-dir'], io.cwd) ?? null;
    const concurrency = wholeNumber(args.values.concurrency, '--concurrency', 1, 64) ?? 8;
    const { runRestore } = await import('../backup/index.ts');
    const { client, session } = await connectWith(args, io);
    const tty = io.stderr === process.stderr && Boolean(process.stderr.isTTY);
    const progress = new ImportProgress(io.stderr, tty ? 'tty' : 'lines');
    try {
      const summary = await runRestore(
        { from, stateDir, allowMissing: Boolean(args.values['allow-missing']), concurrency },
        { client, account: accountOf(client, session?.subdomain), signal: io.signal, onEvent: progress.onEvent },
      );
      progress.finish();
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
