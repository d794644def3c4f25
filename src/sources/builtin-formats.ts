/**
 * crm-ferry's own source formats, as the registry (formats.ts) lists them. Each recognises its
 * files from their first bytes, the extension only a tie-breaker: customers rename files freely, so
 * a CSV called `.xlsx` is read as CSV, and a workbook called `.csv` as a workbook.
 */
import { iconvLite } from './iconv.ts';
import { FerryError } from '../errors/index.ts';
import { readCsv } from './csv/csv.ts';
import type { SourceFormatDefinition, SourceReadOptions } from './format-types.ts';
import type { CommonReadOptions, SourceItem } from './types.ts';
import { readV1Export } from './v1/v1-export.ts';
import { readXlsx } from './xlsx/xlsx.ts';

const ZIP = [0x50, 0x4b, 0x03, 0x04];
const ZIP_EMPTY = [0x50, 0x4b, 0x05, 0x06];
/** Compound File Binary: old .xls workbooks, and password-protected .xlsx ones. */
const OLE2 = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return bytes.length >= prefix.length && prefix.every((b, i) => bytes[i] === b);
}

/** The first characters of a file as text, whatever its Unicode encoding, for a peek at its syntax. */
function peekText(bytes: Buffer): string {
  if (startsWith(bytes, [0xef, 0xbb, 0xbf])) return bytes.subarray(3).toString('utf8');
  if (startsWith(bytes, [0xff, 0xfe])) return iconvLite().decode(bytes.subarray(2), 'utf-16le');
  if (startsWith(bytes, [0xfe, 0xff])) return iconvLite().decode(bytes.subarray(2), 'utf-16be');
  // Characters past ASCII do not matter for what is looked at here.
  return bytes.toString('latin1');
}

/** Only the options every reader shares: CSV settings mean nothing to the others. */
function commonOf(options: SourceReadOptions): Pick<CommonReadOptions, 'onMalformed' | 'onWarning' | 'signal'> {
  return { onMalformed: options.onMalformed, onWarning: options.onWarning, signal: options.signal };
}

/**
 * Excel workbooks (a zip container). An old binary .xls, or a workbook with a password (both
 * Compound File Binary), is refused here with what to do, rather than read as text.
 */
export const xlsxFormat: SourceFormatDefinition = {
  name: 'xlsx',
  description: 'Excel workbook',
  extensions: ['.xlsx', '.xlsm'],
  settings: ['sheet'],
  detect({ file, prefix, extension }) {
    if (startsWith(prefix, ZIP) || startsWith(prefix, ZIP_EMPTY)) return 'zip container (Excel workbook)';
    if (!startsWith(prefix, OLE2)) return undefined;
    if (extension === '.xlsx' || extension === '.xlsm') {
      throw new FerryError(
        'SOURCE_XLSX_ENCRYPTED',
        'the workbook is password-protected (encrypted), so it cannot be read',
        {
          location: { file },
          hint: 'Ask the customer to remove the password (File > Info > Protect Workbook) and send it again.',
        },
      );
    }
    throw new FerryError(
      'SOURCE_FORMAT_UNKNOWN',
      'this is an old binary Excel file (.xls) or another Office file, which crm-ferry does not read',
      {
        location: { file },
        hint: 'Open it in a spreadsheet program and save it as .xlsx or CSV (UTF-8).',
      },
    );
  },
  read(file, options) {
    const { sheet, headerRow } = options;
    return readXlsx(
      file,
      sheet === undefined ? { ...commonOf(options), headerRow } : { ...commonOf(options), headerRow, sheet },
    );
  },
};

/** A legacy export as XML. A web page saved as a spreadsheet starts with `<` too: refused, not read as XML. */
export const v1XmlFormat: SourceFormatDefinition = {
  name: 'v1-xml',
  description: 'legacy export (XML)',
  extensions: ['.xml'],
  settings: ['record'],
  varyingColumns: true,
  detect({ file, prefix }) {
    const text = peekText(prefix).trimStart();
    if (!text.startsWith('<')) return undefined;
    if (/^<(!doctype\s+html|html|table)\b/i.test(text)) {
      throw new FerryError('SOURCE_FORMAT_UNKNOWN', 'this is a web page (HTML), even if its name says spreadsheet', {
        location: { file },
        hint: 'Open it in a spreadsheet program and save it as .xlsx or CSV (UTF-8).',
      });
    }
    return 'XML document (legacy export)';
  },
  read: (file, options) => readLegacyExport(file, options),
};

/** A legacy export as JSON: an object, or a list of objects (a `[` alone counts in a `.json` file). */
export const v1JsonFormat: SourceFormatDefinition = {
  name: 'v1-json',
  description: 'legacy export (JSON)',
  extensions: ['.json'],
  settings: ['record'],
  varyingColumns: true,
  detect({ prefix, extension }) {
    const text = peekText(prefix).trimStart();
    return text.startsWith('{') || /^\[\s*[{\]]/.test(text) || (text.startsWith('[') && extension === '.json')
      ? 'JSON document (legacy export)'
      : undefined;
  },
  read: (file, options) => readLegacyExport(file, options),
};

function readLegacyExport(file: string, options: SourceReadOptions): AsyncGenerator<SourceItem> {
  const { record } = options;
  return readV1Export(file, record === undefined ? commonOf(options) : { ...commonOf(options), record });
}

/** Delimited text: whatever no other format claims. */
export const csvFormat: SourceFormatDefinition = {
  name: 'csv',
  description: 'delimited text',
  extensions: ['.csv', '.tsv', '.txt', '.tab'],
  settings: ['delimiter', 'encoding'],
  detect: ({ extension }) =>
    extension === '.csv' || extension === '.tsv' || extension === '.txt'
      ? 'text file'
      : `text file despite the ${extension || 'missing'} extension`,
  read: (file, options) => readCsv(file, options),
};

/** A live legacy account (`v1+https://HOST`): openSource reads it through the connection it is given, never as a file. */
export const v1ApiFormat: SourceFormatDefinition = {
  name: 'v1-api',
  description: 'live legacy account',
  extensions: [],
  settings: ['record'],
  varyingColumns: true,
  read(file) {
    throw new FerryError('USAGE', 'format v1-api reads a live account, not a file', { location: { file } });
  },
};
