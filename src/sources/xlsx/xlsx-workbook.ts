import { SaxesParser } from 'saxes';
import { FerryError } from '../../errors/index.ts';

/** A sheet as the workbook index lists it, in the order Excel shows the tabs. */
export interface XlsxSheetInfo {
  name: string;
  /** 1-based position among the tabs. */
  index: number;
  /** visible, hidden or veryHidden. */
  state: string;
  /** The zip part holding the sheet's cells, e.g. `xl/worksheets/sheet2.xml`; '' when it cannot be resolved. */
  part: string;
}

interface RawSheet {
  name: string;
  state: string;
  relId: string;
}

function parseXml(xml: string, file: string, onOpen: (name: string, attributes: Record<string, string>) => void): void {
  const parser = new SaxesParser({ xmlns: false });
  let failure: Error | undefined;
  parser.on('error', (error) => {
    failure ??= error;
  });
  parser.on('opentag', (tag) => {
    onOpen(tag.name, tag.attributes as Record<string, string>);
  });
  parser.write(xml).close();
  if (failure) {
    throw new FerryError(
      'SOURCE_XLSX_CORRUPT',
      `the workbook index of ${file} is not well-formed XML: ${failure.message}`,
      {
        location: { file },
        cause: failure,
        hint: 'Re-save the workbook from Excel or LibreOffice.',
      },
    );
  }
}

/** What the workbook index tells us. */
export interface XlsxWorkbookIndex {
  sheets: XlsxSheetInfo[];
  /** Serial day numbers count from 1904-01-01 (old Mac workbooks) instead of 1899-12-30. */
  date1904: boolean;
  /** The shared-strings part as the rels name it; the usual name when they do not. */
  sharedStringsPart: string;
  /** The styles part as the rels name it; the usual name when they do not. */
  stylesPart: string;
}

const SHARED_STRINGS_TYPE = /\/sharedStrings$/;
const STYLES_TYPE = /\/styles$/;

/** Reads the sheet list from `xl/workbook.xml` and resolves each sheet's part through the rels. */
export function parseWorkbookIndex(file: string, workbookXml: string, relsXml: string): XlsxWorkbookIndex {
  const raw: RawSheet[] = [];
  let date1904 = false;
  parseXml(workbookXml, file, (name, attributes) => {
    if (localName(name) === 'workbookPr') {
      const flag = attributes['date1904'];
      date1904 = flag === '1' || flag === 'true';
      return;
    }
    if (localName(name) !== 'sheet') return;
    raw.push({
      name: attributes['name'] ?? '',
      state: attributes['state'] ?? 'visible',
      relId: attributes['r:id'] ?? findRelIdAttribute(attributes),
    });
  });
  const targets = new Map<string, string>();
  let sharedStringsPart = 'xl/sharedStrings.xml';
  let stylesPart = 'xl/styles.xml';
  if (relsXml !== '') {
    parseXml(relsXml, file, (name, attributes) => {
      if (localName(name) !== 'Relationship') return;
      const id = attributes['Id'];
      const target = attributes['Target'];
      if (target === undefined) return;
      if (id !== undefined) targets.set(id, resolveTarget(target));
      const type = attributes['Type'] ?? '';
      if (SHARED_STRINGS_TYPE.test(type)) sharedStringsPart = resolveTarget(target);
      else if (STYLES_TYPE.test(type)) stylesPart = resolveTarget(target);
    });
  }
  const sheets = raw.map((sheet, position) => ({
    name: sheet.name,
    index: position + 1,
    state: sheet.state,
    part: targets.get(sheet.relId) ?? '',
  }));
  return { sheets, date1904, sharedStringsPart, stylesPart };
}

/** Some writers bind the relationships namespace to another prefix than `r`. */
function findRelIdAttribute(attributes: Record<string, string>): string {
  for (const [key, value] of Object.entries(attributes)) {
    if (key.endsWith(':id')) return value;
  }
  return '';
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}

/** Targets are relative to `xl/` unless absolute within the package. */
function resolveTarget(target: string): string {
  if (target.startsWith('/')) return target.slice(1);
  const parts = ['xl'];
  for (const segment of target.split('/')) {
    if (segment === '..') parts.pop();
    else if (segment !== '.' && segment !== '') parts.push(segment);
  }
  return parts.join('/');
}
