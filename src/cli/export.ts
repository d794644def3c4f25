import { EXIT, FerryError } from '../errors/index.ts';
import { type ExportFlags, type ExportSummary, LOCAL_WHERE_HELP } from '../export/index.ts';
import { refuseArguments, type Command } from './command.ts';
import { connectionFlags, connectionOptions, connectWith } from './connection-flags.ts';
import { path, stateStoreOf } from './flags.ts';
import { accountOf } from '../client/index.ts';
import { ProgressLine } from './progress-line.ts';
import { formatCount } from '../util/index.ts';

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

export function formatExportSummary(summary: ExportSummary): string {
  const lines = [
    `Exported ${formatCount(summary.records)} record${summary.records === 1 ? '' : 's'}${summary.since ? ` changed since ${summary.since}` : ''}, ${summary.requests} requests, ${seconds(summary.elapsedMs)}.`,
  ];
  if (summary.checkedHere.length > 0) {
    lines.push(
      `Read ${formatCount(summary.read)} record${summary.read === 1 ? '' : 's'} to check ${summary.checkedHere.map((c) => JSON.stringify(c)).join(', ')} here: the service's filter cannot compare amounts.`,
    );
  }
  if (summary.since) lines.push(`${summary.deleted} deleted since then.`);
  for (const file of summary.files) lines.push(`  -> ${file}`);
  return `${lines.join('\n')}\n`;
}

export const exportCommand: Command = {
  name: 'export',
  usage: `Usage: crm-ferry export ENTITY --out FILE [options] [connection]

ENTITY is parties, opportunities, kases, entries or tasks. The format follows the extension of
--out (.csv, .xlsx, .jsonl) or --format; --out - writes CSV or JSON Lines to standard output.
The file appears under its name only when the export is complete.`,
  epilog: `Examples: --where 'tag is VIP', --where 'addedOn is within last 30',
  --where '"custom:Customer since" is after 2021-01-01', --where 'value is greater than 250000'

The service's filter checks every condition but one kind: ${LOCAL_WHERE_HELP} is checked
here, on every record the other conditions let through (with no other condition, a full read of
the list: one request per 100 records). Amounts are compared as numbers, whatever their currency:
add --where 'currency is EUR' to compare like with like.

Exit code 0 done, 2 bad usage or filter or a file that cannot be written, 4 the service refused
or could not be reached, 130 interrupted, 143 stopped by SIGTERM (no file is left and the state
is unchanged).`,
  options: {
    out: { type: 'string', value: 'FILE', describe: 'the file to write; - for standard output', group: 'Output:' },
    format: { type: 'string', value: 'csv|xlsx|jsonl', describe: 'when the extension does not say', group: 'Output:' },
    columns: {
      type: 'string',
      value: 'a,b,c',
      describe: 'these columns, in this order (default: every column)',
      group: 'Output:',
    },
    mapping: {
      type: 'string',
      multiple: true,
      value: 'FILE',
      describe:
        'the columns an import mapping reads, filled so that importing the file with it makes the same records (repeatable)',
      group: 'Output:',
    },
    attachments: {
      type: 'string',
      value: 'DIR',
      describe:
        "entries: download each entry's attachments to DIR/<attachment id>/<file name>, for a --mapping that reads them",
      group: 'Output:',
    },
    plain: { type: 'boolean', describe: 'CSV without the BOM and with LF line ends', group: 'Output:' },
    raw: {
      type: 'boolean',
      describe: 'texts that look like formulas (=, +, -, @) are written as they are',
      group: 'Output:',
    },
    where: {
      type: 'string',
      multiple: true,
      value: 'FIELD OPERATOR VALUE',
      describe:
        'a condition (repeatable; all must hold); amounts compared here cost a read of what the others let through (below)',
      group: 'Filters (parties, opportunities, kases):',
    },
    any: {
      type: 'boolean',
      describe: 'one of the conditions is enough',
      group: 'Filters (parties, opportunities, kases):',
    },
    'order-by': {
      type: 'string',
      value: 'FIELD[:desc]',
      describe: 'the order of the records',
      group: 'Filters (parties, opportunities, kases):',
    },
    filter: {
      type: 'string',
      value: 'FILE',
      describe: "a filter in the service's shape (YAML or JSON) instead",
      group: 'Filters (parties, opportunities, kases):',
    },
    since: {
      type: 'string',
      value: 'auto|DATE',
      describe:
        'auto (with --state): only what changed since the last complete export, the first run exports everything, deleted ids go to OUT.deleted.csv (or a Deleted sheet); DATE: only what changed since DATE',
      group: 'Incremental (parties, opportunities, kases):',
    },
    state: {
      type: 'string',
      value: 'FILE',
      describe: 'where --since auto keeps the time of the last complete export (with --state-store, its name there)',
      group: 'Incremental (parties, opportunities, kases):',
    },
    'state-key': {
      type: 'string',
      value: 'KEY',
      describe:
        'with --state-store: the name of the export state there (default: the --state file name and the account)',
      group: 'Incremental (parties, opportunities, kases):',
    },
    ...connectionFlags,
  },
  async run(args, io) {
    const v = args.values;
    const str = (name: string): string | undefined => (typeof v[name] === 'string' ? (v[name] as string) : undefined);
    const flags = {
      cwd: io.cwd,
      where: (v.where as string[] | undefined) ?? [],
      mapping: (v.mapping as string[] | undefined) ?? [],
      any: Boolean(v.any),
      plain: Boolean(v.plain),
      raw: Boolean(v.raw),
    } as ExportFlags;
    refuseArguments('export', args, ['ENTITY']);
    if (args.positionals[0] !== undefined) flags.entity = args.positionals[0];
    for (const [flag, key] of [
      ['out', 'out'],
      ['format', 'format'],
      ['order-by', 'orderBy'],
      ['filter', 'filter'],
      ['columns', 'columns'],
      ['since', 'since'],
      ['state', 'state'],
      ['attachments', 'attachments'],
    ] as const) {
      const value = str(flag);
      if (value !== undefined) flags[key] = value;
    }
    const { normaliseExportOptions, runExport } = await import('../export/index.ts');
    const store = connectionOptions(args, io.env).stateStore;
    const incremental = store !== undefined && flags.since === 'auto';
    if (incremental && flags.state === undefined && args.values['state-key'] === undefined)
      throw new FerryError(
        'USAGE',
        '--since auto with --state-store needs --state-key KEY (or --state NAME): the name of the export state in the store',
      );
    // Checked before connecting; with a store, its key is known once the account is.
    let options = normaliseExportOptions(incremental ? { ...flags, stateStore: { url: store, key: '-' } } : flags);
    const { client, session } = await connectWith(args, io);
    try {
      const account = accountOf(client, session?.subdomain);
      if (incremental) {
        const named = stateStoreOf(
          args,
          io.env,
          account,
          flags.state ? path(flags.state, io.cwd) : undefined,
          'export',
        );
        if (named) options = normaliseExportOptions({ ...flags, stateStore: named });
      }
      const toStdout = options.out === null;
      // A line rewritten in place on a terminal; in a log (cron), a dated line every 30 s at most.
      const tty = io.stderr === process.stderr && Boolean(process.stderr.isTTY);
      const progress = new ProgressLine(io.stderr, tty ? 'tty' : 'lines', 30_000);
      const summary = await runExport(options, {
        client,
        account,
        signal: io.signal,
        stdout: io.stdout,
        onEvent: (p) => progress.show(`${formatCount(p.records)} records, ${p.requests} requests`),
      });
      progress.finish();
      if (summary.interrupted) {
        io.stderr.write('Interrupted: no file was written and the state is unchanged.\n');
        return EXIT.INTERRUPTED;
      }
      (toStdout ? io.stderr : io.stdout).write(formatExportSummary(summary));
      if (
        summary.records === 0 &&
        summary.since === null &&
        (options.where.length > 0 || options.filterFile !== null)
      ) {
        // Users, teams and custom fields named in a condition are checked against the account;
        // tags cannot be (the service lists no tags), so a misspelt tag is an empty result.
        const tagged = options.where.some((condition) => /^"?(org\.)?tag"?\s/i.test(condition.trim()));
        io.stderr.write(
          `No record matched the filter.${tagged ? ' Tag names are not checked before the export (the service lists no tags): check the spelling of the tag, as the account writes it.' : ''}\n`,
        );
      }
      if (summary.textsCut > 0) {
        io.stderr.write(
          `Warning: ${formatCount(summary.textsCut)} text${summary.textsCut === 1 ? ' was' : 's were'} longer than the 32,767 characters a spreadsheet cell holds and ${summary.textsCut === 1 ? 'was' : 'were'} cut in the XLSX file; export to CSV or JSON Lines for the whole texts.\n`,
        );
      }
      return EXIT.OK;
    } finally {
      await client.close();
    }
  },
};
