import type { BackupSummary } from '../backup/index.ts';
import { EXIT } from '../errors/index.ts';
import { refuseArguments, type Command } from './command.ts';
import { connectionFlags, connectWith } from './connection-flags.ts';
import { stateStoreOf } from './flags.ts';
import { accountOf } from '../client/index.ts';
import { formatCount } from '../util/index.ts';

export function formatBackupSummary(summary: BackupSummary, out: string): string {
  const files = Object.entries(summary.files);
  const records = files.reduce((sum, [, file]) => sum + file.records, 0);
  const lines = [
    `Backed up ${formatCount(records)} records in ${files.length} files and ${summary.attachments.files} attachment files${summary.since ? ` (changes since ${summary.since} merged in)` : ''}${summary.resumed ? ', continuing an interrupted backup' : ''}; ${summary.requests} requests.`,
  ];
  if (summary.since)
    lines.push(
      `Deleted since then: ${summary.deleted.parties} parties, ${summary.deleted.opportunities} opportunities, ${summary.deleted.kases} projects.`,
    );
  lines.push(`  -> ${out}`);
  return `${lines.join('\n')}\n`;
}

export const backupCommand: Command = {
  name: 'backup',
  usage: `Usage: crm-ferry backup --out DIR [--since auto] [connection]

Writes the whole account into DIR: one JSON Lines file per kind of record (parties,
opportunities, projects, entries, tasks, tracks, additional parties of projects and the
configuration they refer to), the attachment files, and manifest.json with counts and SHA-256
checksums, written last (docs/backup.md). A backup killed or stopped half-way is continued by the
same command.`,
  epilog: `Exit code 0 done, 2 bad usage or a folder that cannot be written, 4 the service refused or could not be
reached, 130 interrupted, 143 stopped by SIGTERM (run the same command again to continue).`,
  options: {
    out: {
      type: 'string',
      value: 'DIR',
      describe: 'the backup folder: new, empty, or holding a backup of the same account',
    },
    since: {
      type: 'string',
      value: 'auto',
      describe:
        'auto: only parties, opportunities and projects changed since the backup in DIR began are read and merged in, deleted ones removed (a first run reads everything)',
    },
    'state-key': {
      type: 'string',
      value: 'KEY',
      describe:
        "with --state-store: the name of the backup's lock there (default: DIR's name and the account); a lock another machine left in DIR is then taken over",
    },
    ...connectionFlags,
  },
  async run(args, io) {
    refuseArguments('backup', args);
    const { FerryError } = await import('../errors/index.ts');
    const out = args.values.out;
    if (typeof out !== 'string' || out === '')
      throw new FerryError('USAGE', 'backup needs --out DIR, the folder to write the backup into');
    const since = args.values.since;
    if (since !== undefined && since !== 'auto')
      throw new FerryError('USAGE', `--since takes auto, got ${JSON.stringify(since)}`, {
        hint: 'A backup folder knows when it was made: --since auto reads what changed since then.',
      });
    const { resolve } = await import('node:path');
    const { runBackup } = await import('../backup/index.ts');
    const { client, session } = await connectWith(args, io);
    try {
      const account = accountOf(client, session?.subdomain);
      const folder = resolve(io.cwd, out);
      // A line rewritten in place on a terminal; in a log (cron), a dated line every 30 s at most.
      const tty = io.stderr === process.stderr && Boolean(process.stderr.isTTY);
      let lastLine = Date.now();
      let shown = false;
      const summary = await runBackup(
        {
          out: folder,
          since: since === 'auto' ? 'auto' : null,
          stateStore: stateStoreOf(args, io.env, account, folder, 'backup'),
        },
        {
          client,
          account,
          signal: io.signal,
          onEvent: (p) => {
            const line = `${p.step}: ${formatCount(p.records)} records, ${p.requests} requests`;
            if (tty) {
              io.stderr.write(`\r${line}\u001b[K`);
              shown = true;
            } else if (Date.now() - lastLine >= 30_000) {
              io.stderr.write(`${new Date().toISOString()} ${line}\n`);
              lastLine = Date.now();
            }
          },
        },
      );
      if (shown) io.stderr.write('\n');
      if (summary.interrupted) {
        io.stderr.write(`Interrupted: what was read is kept in ${folder}; run the same command again to continue.\n`);
        return EXIT.INTERRUPTED;
      }
      io.stdout.write(formatBackupSummary(summary, folder));
      return EXIT.OK;
    } finally {
      await client.close();
    }
  },
};
