import { isAbsolute, resolve } from 'node:path';
import { isV1LiveInput, printable, printableLines } from '../util/index.ts';
import { EXIT, FerryError } from '../errors/index.ts';
import {
  describeDelimiter,
  type InspectOptions,
  type InspectReport,
  normalizeDelimiter,
  normalizeHeaderRow,
} from '../sources/index.ts';
import type { Command, ParsedArgs } from './command.ts';

/** Builds the library options from the flags; every flag error is a USAGE error. */
export function toInspectOptions(args: ParsedArgs): { file: string; json: boolean; options: InspectOptions } {
  const v = args.values;
  if (args.positionals.length !== 1) {
    throw new FerryError('USAGE', `inspect takes exactly one FILE, got ${args.positionals.length}`, {
      hint: 'Usage: crm-ferry inspect FILE [--sheet S] [--encoding E] [--delimiter D] [--header-row N|none] [--json]',
    });
  }
  const options: InspectOptions = {};
  const usage = (error: unknown): never => {
    throw new FerryError('USAGE', (error as Error).message, { cause: error });
  };
  const sheet = v.sheet as string | undefined;
  if (sheet !== undefined) options.sheet = sheet;
  if (v.encoding !== undefined) options.encoding = v.encoding as string;
  if (v.delimiter !== undefined) {
    try {
      options.delimiter = normalizeDelimiter(v.delimiter as string);
    } catch (error) {
      usage(error);
    }
  }
  if (v['header-row'] !== undefined) {
    try {
      options.headerRow = normalizeHeaderRow(v['header-row'] as string);
    } catch (error) {
      usage(error);
    }
  }
  return { file: args.positionals[0] as string, json: Boolean(v.json), options };
}

const ENCODING_BASIS: Record<NonNullable<InspectReport['encodingBasis']>, string> = {
  bom: 'byte-order mark',
  option: 'given',
  'valid-utf8': 'detected: valid UTF-8',
  'invalid-utf8': 'guessed: not valid UTF-8',
  'utf16-pattern': 'guessed from the byte pattern',
};

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + ' '.repeat(width - text.length);
}

/** The report as a person reads it in a terminal. */
export function formatInspectReport(report: InspectReport): string {
  const lines: string[] = [];
  const field = (label: string, value: string): void => {
    lines.push(`${pad(`${label}:`, 12)}${value}`);
  };
  field('File', report.file);
  field('Format', `${report.format} (${report.formatReason})`);
  if (report.sheets)
    field(
      'Sheets',
      `${report.sheets.map((s) => JSON.stringify(s)).join(', ')}; reading ${JSON.stringify(report.sheet)}`,
    );
  if (report.encoding !== undefined) {
    const basis = report.encodingBasis ? ENCODING_BASIS[report.encodingBasis] : '';
    field('Encoding', `${report.encoding}${report.bom ? ' with BOM' : ''} (${basis})`);
  }
  if (report.delimiter !== undefined)
    field('Delimiter', `${describeDelimiter(report.delimiter)} (${report.delimiterBasis})`);
  if (report.headerRow !== undefined) field('Header row', String(report.headerRow));
  field('Rows', String(report.rowCount));
  field('Row errors', String(report.errorCount));
  lines.push('');
  lines.push(`Columns (${report.columns.length}):`);
  // Names are padded as they are printed: with their control characters escaped.
  const nameWidth = Math.max(4, ...report.columns.map((c) => printable(c.name).length));
  const numberWidth = String(report.columns.length).length;
  lines.push(`  ${pad('#', numberWidth)}  ${pad('Name', nameWidth)}  ${pad('Filled', 7)}  Samples`);
  report.columns.forEach((column, index) => {
    const samples = column.samples.map((s) => JSON.stringify(s)).join(', ');
    lines.push(
      `  ${pad(String(index + 1), numberWidth)}  ${pad(printable(column.name), nameWidth)}  ${pad(`${column.fillRate.toFixed(1)}%`, 7)}  ${samples}`,
    );
  });
  if (report.findings.length > 0) {
    lines.push('');
    lines.push(`Check before importing (${report.findings.length}):`);
    for (const f of report.findings) lines.push(`  [${f.code}] ${f.message}`);
  }
  if (report.warningCount > 0) {
    lines.push('');
    lines.push(
      report.warningCount > report.warnings.length
        ? `Warnings (first ${report.warnings.length} of ${report.warningCount}):`
        : `Warnings (${report.warningCount}):`,
    );
    for (const w of report.warnings)
      lines.push(`  row ${w.row}${w.line === undefined ? '' : `, line ${w.line}`}: [${w.code}] ${w.message}`);
  }
  if (report.errorCount > 0) {
    lines.push('');
    lines.push(
      report.errorCount > report.errors.length
        ? `Row errors (first ${report.errors.length} of ${report.errorCount}):`
        : `Row errors (${report.errorCount}):`,
    );
    for (const e of report.errors) {
      const where = `${e.sheet === undefined ? '' : `sheet ${JSON.stringify(e.sheet)}, `}row ${e.row}${e.line === undefined ? '' : `, line ${e.line}`}`;
      lines.push(`  ${where}: [${e.code}] ${e.message}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export const inspectCommand: Command = {
  name: 'inspect',
  usage: `Usage: crm-ferry inspect FILE [options]

Reads the whole file (CSV, XLSX, or a legacy v1 XML/JSON export) and shows what a mapping needs:
format, encoding, delimiter, sheets, columns with fill rate and sample values, row count and the
first row errors. It also flags what ruins an import later: a value on more than one row in the
column that looks like the key (the first id column) or in an e-mail column, and a date column
whose dates read in two orders (03/04/2024 beside 25/04/2024, or 25/04/2024 beside 04/25/2024).`,
  epilog: 'Exit code 0, or 3 when some rows cannot be read.',
  options: {
    sheet: { type: 'string', value: 'S', describe: 'XLSX: sheet name or 1-based number (default: the first sheet)' },
    encoding: {
      type: 'string',
      value: 'E',
      describe: 'CSV: utf-8, utf-16le, utf-16be, windows-1252, latin1 ... (default: detected)',
    },
    delimiter: {
      type: 'string',
      value: 'D',
      describe: 'CSV: one character, or tab, comma, semicolon, pipe (default: detected)',
    },
    'header-row': {
      type: 'string',
      value: 'N|none',
      describe: 'row holding the column names (default 1); none names them column1, column2 ...',
    },
    json: { type: 'boolean', describe: 'print the report as JSON' },
  },
  async run(args, io) {
    const { file, json, options } = toInspectOptions(args);
    if (isV1LiveInput(file)) {
      throw new FerryError('USAGE', 'inspect reads files; a live v1 account is read by import, run and verify', {
        hint: 'Try the mapping on it with `crm-ferry import --mapping M --input v1+https://HOST --dry-run`, or inspect an export file of it.',
      });
    }
    const path = isAbsolute(file) ? file : resolve(io.cwd, file);
    let report: InspectReport;
    try {
      const { inspectSource } = await import('../sources/index.ts');
      report = await inspectSource(path, { ...options, signal: io.signal });
    } catch (error) {
      if (io.signal.aborted) {
        io.stderr.write('inspect interrupted\n');
        return EXIT.INTERRUPTED;
      }
      throw error;
    }
    // Show the path as it was typed, not as resolved.
    report.file = file;
    io.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : printableLines(formatInspectReport(report)));
    return report.errorCount > 0 ? EXIT.ROWS_REJECTED : EXIT.OK;
  },
};
