import { isDateFormat } from './xlsx-cells.ts';
import { createXmlParser, localName, parseXmlPart } from './xlsx-xml.ts';

/**
 * Built-in number formats that show a date or a time. Their codes are not stored in the file
 * (only custom formats, id 164 and up, are), so they are known by id: 14-22 are the Western date
 * and time formats, 45-47 the minute/second ones, 27-36 and 50-58 the East Asian date formats.
 */
const BUILTIN_DATE_FORMAT_IDS: ReadonlySet<number> = new Set([
  14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54, 55, 56,
  57, 58,
]);

/** Which cell styles (the `s` attribute of a cell) show their number as a date. */
export class DateStyles {
  constructor(private readonly dateStyle: Uint8Array) {}

  /** No styles part: every number reads as a number. */
  static none(): DateStyles {
    return new DateStyles(new Uint8Array(0));
  }

  /** Builds the table from each cell format's number format id and the workbook's custom format codes. */
  static from(formatIds: readonly number[], customFormats: ReadonlyMap<number, string>): DateStyles {
    const flags = new Uint8Array(formatIds.length);
    formatIds.forEach((id, style) => {
      flags[style] = isDateFormatId(id, customFormats) ? 1 : 0;
    });
    return new DateStyles(flags);
  }

  /** An unknown style index (a damaged file) reads as not a date, so the number survives. */
  isDate(style: number): boolean {
    return this.dateStyle[style] === 1;
  }
}

/** A custom code wins over the built-in meaning: a file may redefine a low id. */
export function isDateFormatId(id: number, customFormats: ReadonlyMap<number, string>): boolean {
  const custom = customFormats.get(id);
  if (custom !== undefined) return isDateFormat(custom);
  return BUILTIN_DATE_FORMAT_IDS.has(id);
}

/**
 * Reads the number formats of `styles.xml`: the custom codes under `<numFmts>` and, in order, the
 * format id of each `<xf>` under `<cellXfs>` (a cell's `s` is an index into that list). Fonts,
 * fills and the rest are skipped.
 * @throws FerryError SOURCE_XLSX_CORRUPT when the part is not well-formed XML.
 */
export async function readDateStyles(
  chunks: AsyncIterable<Buffer>,
  file: string,
  part: string,
  signal: AbortSignal | undefined,
): Promise<DateStyles> {
  const parser = createXmlParser();
  const customFormats = new Map<number, string>();
  const formatIds: number[] = [];
  let inCellFormats = false;
  parser.on('opentag', (tag) => {
    switch (localName(tag.name)) {
      case 'numFmt': {
        const id = Number(tag.attributes['numFmtId']);
        const code = tag.attributes['formatCode'];
        if (Number.isInteger(id) && code !== undefined) customFormats.set(id, code);
        break;
      }
      case 'cellXfs':
        inCellFormats = true;
        break;
      case 'xf':
        if (inCellFormats) formatIds.push(Number(tag.attributes['numFmtId'] ?? 0));
        break;
    }
  });
  parser.on('closetag', (tag) => {
    if (localName(tag.name) === 'cellXfs') inCellFormats = false;
  });
  await parseXmlPart(file, part, chunks, parser, signal);
  return DateStyles.from(formatIds, customFormats);
}
