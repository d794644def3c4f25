import { open } from 'node:fs/promises';
import { extname } from 'node:path';
import iconv from 'iconv-lite';
import { FerryError } from '../errors/index.ts';
import { fileError, readCsv, statSource } from './csv.ts';
import type { CsvReadOptions } from './csv.ts';
import type { SourceItem, SourceWarning } from './types.ts';
import { readV1Export } from './v1-export.ts';
import type { V1ReadOptions } from './v1-export.ts';
import { readXlsx } from './xlsx.ts';
import type { V1LiveConnection, V1WireFormat } from '../client/index.ts';
import { isV1LiveInput, parseV1LiveInput } from '../util/index.ts';
import { readV1Live } from './v1-live.ts';

/** `v1-api`: not a file but a live legacy account (`v1+https://HOST`). */
export type SourceFormat = 'csv' | 'xlsx' | 'v1-xml' | 'v1-json' | 'v1-api';

/** Every format openSource can read, for flag validation. */
export const SOURCE_FORMATS: readonly SourceFormat[] = ['csv', 'xlsx', 'v1-xml', 'v1-json', 'v1-api'];

export interface FormatDecision {
  format: SourceFormat;
  /** Why, in a few words, for `inspect` and for warnings. */
  reason: string;
}

export interface OpenSourceOptions extends CsvReadOptions {
  /** Skips detection. */
  format?: SourceFormat;
  /** XLSX: sheet name or 1-based index. @default 1 */
  sheet?: string | number;
  /** Legacy exports: which records to read when a file holds several kinds. */
  record?: V1ReadOptions['record'];
  /** A live v1 source (`v1+https://HOST`): how to reach it. Without it such an input is refused. */
  v1Live?: V1LiveConnection | undefined;
  /** A live v1 source: the format to ask for. @default the connection's */
  wireFormat?: V1WireFormat;
  /** A live v1 source: records per page. @default 100 */
  pageSize?: number;
  /** A live v1 source: the address when the input does not give it (a mapping's `source: {format: v1-api, baseUrl}`). */
  baseUrl?: string;
  /** A live v1 source: the folder where the read spools what it fetched, to go on from there (see readV1Live `spool`). */
  v1Spool?: string | undefined;
  /** A live v1 source: read the spool alone, when it holds the whole list (see readV1Live `spoolOnly`). @default false */
  v1SpoolOnly?: boolean;
}

export interface OpenedSource {
  file: string;
  format: SourceFormat;
  reason: string;
  items: AsyncGenerator<SourceItem>;
}

/** The settings that only one kind of file reads, and the formats that read each. */
const FORMAT_SETTINGS: ReadonlyArray<{ key: 'sheet' | 'delimiter' | 'encoding' | 'record'; none: string; formats: readonly SourceFormat[] }> = [
  { key: 'sheet', none: 'no sheets', formats: ['xlsx'] },
  { key: 'delimiter', none: 'no delimiter to choose', formats: ['csv'] },
  { key: 'encoding', none: 'no text encoding to choose', formats: ['csv'] },
  { key: 'record', none: 'no legacy records', formats: ['v1-xml', 'v1-json', 'v1-api'] },
];

/**
 * A setting for another kind of file (`--sheet 2` on a CSV, `--delimiter ';'` on a workbook) is
 * a mistake about the file, not something to pass over: said before anything is read.
 */
function refuseSettingsOfOtherFormats(file: string, decision: FormatDecision, options: OpenSourceOptions): void {
  for (const setting of FORMAT_SETTINGS) {
    if (options[setting.key] === undefined || setting.formats.includes(decision.format)) continue;
    throw new FerryError('USAGE', `${setting.key} ${JSON.stringify(options[setting.key])} was given, but this file is read as ${decision.format} (${decision.reason}), which has ${setting.none}`, {
      location: { file },
      hint: `Leave \`${setting.key}\` out for this file (from the mapping's \`source:\` or the command line), or check that the file and the mapping are the ones you meant (\`crm-ferry inspect\` shows what the file holds).`,
    });
  }
}

const ZIP = [0x50, 0x4b, 0x03, 0x04];
const ZIP_EMPTY = [0x50, 0x4b, 0x05, 0x06];
/** Compound File Binary: old .xls workbooks, and password-protected .xlsx ones. */
const OLE2 = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
const PREFIX_BYTES = 4096;

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return bytes.length >= prefix.length && prefix.every((b, i) => bytes[i] === b);
}

/** The first characters of a file as text, whatever its Unicode encoding, for a peek at its syntax. */
function peekText(bytes: Buffer): string {
  if (startsWith(bytes, [0xef, 0xbb, 0xbf])) return bytes.subarray(3).toString('utf8');
  if (startsWith(bytes, [0xff, 0xfe])) return iconv.decode(bytes.subarray(2), 'utf-16le');
  if (startsWith(bytes, [0xfe, 0xff])) return iconv.decode(bytes.subarray(2), 'utf-16be');
  // Characters past ASCII do not matter for what is looked at here.
  return bytes.toString('latin1');
}

async function readPrefix(file: string): Promise<Buffer> {
  await statSource(file);
  let handle;
  try {
    handle = await open(file, 'r');
    const buffer = Buffer.alloc(PREFIX_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, PREFIX_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } catch (error) {
    throw fileError(file, error);
  } finally {
    await handle?.close();
  }
}

/**
 * Decides a file's format from its first bytes, with the extension only as a tie-breaker: customers
 * rename files freely, so a CSV called `.xlsx` is read as CSV, and a workbook called `.csv` as a
 * workbook. Throws SOURCE_FORMAT_UNKNOWN (old .xls, HTML saved as a spreadsheet) or
 * SOURCE_XLSX_ENCRYPTED (a password-protected workbook).
 */
export async function detectFormat(file: string): Promise<FormatDecision> {
  const bytes = await readPrefix(file);
  const extension = extname(file).toLowerCase();
  if (startsWith(bytes, ZIP) || startsWith(bytes, ZIP_EMPTY)) {
    return { format: 'xlsx', reason: 'zip container (Excel workbook)' };
  }
  if (startsWith(bytes, OLE2)) {
    if (extension === '.xlsx' || extension === '.xlsm') {
      throw new FerryError('SOURCE_XLSX_ENCRYPTED', 'the workbook is password-protected (encrypted), so it cannot be read', {
        location: { file },
        hint: 'Ask the customer to remove the password (File > Info > Protect Workbook) and send it again.',
      });
    }
    throw new FerryError('SOURCE_FORMAT_UNKNOWN', 'this is an old binary Excel file (.xls) or another Office file, which crm-ferry does not read', {
      location: { file },
      hint: 'Open it in a spreadsheet program and save it as .xlsx or CSV (UTF-8).',
    });
  }
  const text = peekText(bytes).trimStart();
  if (text.startsWith('<')) {
    if (/^<(!doctype\s+html|html|table)\b/i.test(text)) {
      throw new FerryError('SOURCE_FORMAT_UNKNOWN', 'this is a web page (HTML), even if its name says spreadsheet', {
        location: { file },
        hint: 'Open it in a spreadsheet program and save it as .xlsx or CSV (UTF-8).',
      });
    }
    return { format: 'v1-xml', reason: 'XML document (legacy export)' };
  }
  if (text.startsWith('{') || /^\[\s*[{\]]/.test(text) || (text.startsWith('[') && extension === '.json')) {
    return { format: 'v1-json', reason: 'JSON document (legacy export)' };
  }
  return { format: 'csv', reason: extension === '.csv' || extension === '.tsv' || extension === '.txt' ? 'text file' : `text file despite the ${extension || 'missing'} extension` };
}

const EXPECTED_EXTENSIONS: Record<SourceFormat, string[]> = {
  csv: ['.csv', '.tsv', '.txt', '.tab'],
  xlsx: ['.xlsx', '.xlsm'],
  'v1-xml': ['.xml'],
  'v1-json': ['.json'],
  'v1-api': [],
};

/**
 * Opens any source file: detects its format (or takes `options.format`) and hands back the rows of
 * the matching reader. A file whose extension disagrees with its content gets an OTHER warning.
 */
export async function openSource(file: string, options: OpenSourceOptions = {}): Promise<OpenedSource> {
  if (isV1LiveInput(file) || options.format === 'v1-api') return openV1Live(file, options);
  // detectFormat checks the file first; a format given skips detection, not the check.
  if (options.format) await statSource(file);
  const decision: FormatDecision = options.format ? { format: options.format, reason: 'given' } : await detectFormat(file);
  const extension = extname(file).toLowerCase();
  if (!options.format && !EXPECTED_EXTENSIONS[decision.format].includes(extension) && options.onWarning) {
    const warning: SourceWarning = {
      code: 'OTHER',
      message: `the file is named ${extension || 'without an extension'} but holds ${decision.reason}; reading it as ${decision.format}`,
      location: { file, row: 1 },
    };
    options.onWarning(warning);
  }
  refuseSettingsOfOtherFormats(file, decision, options);
  const { sheet, record, headerRow } = options;
  // Only the options every reader shares are passed on; CSV settings mean nothing to the others.
  const common = { onMalformed: options.onMalformed, onWarning: options.onWarning, signal: options.signal };
  let items: AsyncGenerator<SourceItem>;
  switch (decision.format) {
    case 'csv':
      items = readCsv(file, options);
      break;
    case 'xlsx':
      items = readXlsx(file, sheet === undefined ? { ...common, headerRow } : { ...common, headerRow, sheet });
      break;
    case 'v1-xml':
    case 'v1-json':
      items = readV1Export(file, record === undefined ? common : { ...common, record });
      break;
    case 'v1-api':
      throw new FerryError('USAGE', 'format v1-api reads a live account, not a file', { location: { file } });
  }
  return { file, format: decision.format, reason: decision.reason, items };
}

/**
 * A live v1 account as a source: `v1+https://HOST[/api/LIST]`, or the `baseUrl` of a mapping's
 * `source: {format: v1-api}` when the input is not given as such an address.
 */
function openV1Live(input: string, options: OpenSourceOptions): OpenedSource {
  let address = input;
  if (!isV1LiveInput(input)) {
    if (options.baseUrl === undefined) {
      throw new FerryError('USAGE', `the source format is v1-api (a live account), but the input ${JSON.stringify(input)} is no v1+https:// address and the source names no baseUrl`, {
        hint: 'Give the input as v1+https://OLD-ACCOUNT.example.com, or `baseUrl:` in the mapping\'s source.',
      });
    }
    address = `v1+${options.baseUrl}`;
  }
  const { baseUrl, list } = parseV1LiveInput(address);
  if (!options.v1Live) {
    throw new FerryError('CONFIG_MISSING', `${address} is a live v1 source, which only import, run and verify read`, {
      hint: 'Read it with crm-ferry import --input v1+https://HOST (--dry-run to check the mapping), crm-ferry run PLAN or crm-ferry verify; here, read an export file of it instead.',
    });
  }
  const live = options.v1Live;
  const reader = live.readerFor(baseUrl, options.wireFormat);
  const read: Parameters<typeof readV1Live>[1] = { onMalformed: options.onMalformed, onWarning: options.onWarning, signal: options.signal };
  if (options.record !== undefined) read.record = options.record;
  if (list !== undefined) read.list = list;
  if (options.pageSize !== undefined) read.pageSize = options.pageSize;
  if (live.since !== undefined) read.since = live.since;
  if (options.v1Spool !== undefined) read.spool = options.v1Spool;
  if (options.v1SpoolOnly) read.spoolOnly = true;
  return { file: address, format: 'v1-api', reason: `live v1 account (${reader.format.toUpperCase()})`, items: readV1Live(reader, read) };
}
