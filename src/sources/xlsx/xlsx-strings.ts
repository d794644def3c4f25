import { FerryError } from '../../errors/index.ts';
import { createXmlParser, localName, parseXmlPart, unescapeOoxml } from './xlsx-xml.ts';

/** Offsets are 32-bit; a table past this would be a crafted file, not a spreadsheet. */
const MAX_TABLE_BYTES = 0xffff_ffff;
const FIRST_CAPACITY_BYTES = 1024 * 1024;
const FIRST_CAPACITY_STRINGS = 4096;
/** `uniqueCount` is a claim made by the file; never reserve more than this on its word. */
const MAX_RESERVED_STRINGS = 1 << 22;

/**
 * The shared strings of a workbook, packed: all texts as UTF-8 in one buffer and their end
 * offsets in a typed array. A workbook keeps one table for all its sheets, and a big export has
 * hundreds of thousands of entries; as separate JavaScript strings they cost several times their
 * text (headers, sliced parents kept alive), and the garbage collector has to walk them all on
 * every major collection. Here they are two allocations the collector does not look into, and a
 * cell gets a fresh short-lived string when it is read.
 */
export class SharedStringTable {
  private bytes: Buffer;
  private used = 0;
  private ends: Uint32Array;
  /** 1 where the entry is plain ASCII, which decodes faster as latin1. */
  private ascii: Uint8Array;
  private count = 0;

  /**
   * @param expectedBytes an estimate of the text size (the part's inflated size bounds it for
   *   UTF-8 parts); memory is reserved lazily, so an overestimate costs address space only.
   * @param expectedCount an estimate of the number of entries.
   */
  constructor(expectedBytes = FIRST_CAPACITY_BYTES, expectedCount = FIRST_CAPACITY_STRINGS) {
    this.bytes = Buffer.allocUnsafeSlow(Math.max(16, Math.min(expectedBytes, MAX_TABLE_BYTES)));
    const strings = Math.max(16, Math.min(expectedCount, MAX_RESERVED_STRINGS));
    this.ends = new Uint32Array(strings);
    this.ascii = new Uint8Array(strings);
  }

  /** Number of entries. */
  get size(): number {
    return this.count;
  }

  /** Bytes held by the table, for measurements. */
  get byteLength(): number {
    return this.bytes.length + this.ends.byteLength + this.ascii.byteLength;
  }

  add(text: string): void {
    if (this.count === this.ends.length) this.growIndex();
    // A UTF-8 character takes at most 3 bytes per UTF-16 code unit; only near the end of the
    // buffer is the exact size worth counting, so that the last entries do not double it.
    if (this.used + text.length * 3 > this.bytes.length) {
      const needed = this.used + Buffer.byteLength(text, 'utf8');
      if (needed > this.bytes.length) this.growBytes(needed);
    }
    const written = this.bytes.write(text, this.used, 'utf8');
    this.used += written;
    this.ends[this.count] = this.used;
    this.ascii[this.count] = written === text.length ? 1 : 0;
    this.count++;
  }

  /** The entry at a 0-based index, or undefined when the table has no such entry. */
  get(index: number): string | undefined {
    if (!(index >= 0 && index < this.count) || !Number.isInteger(index)) return undefined;
    const start = index === 0 ? 0 : (this.ends[index - 1] ?? 0);
    const end = this.ends[index] ?? start;
    return this.bytes.toString(this.ascii[index] === 1 ? 'latin1' : 'utf8', start, end);
  }

  private growIndex(): void {
    const ends = new Uint32Array(this.ends.length * 2);
    ends.set(this.ends);
    this.ends = ends;
    const ascii = new Uint8Array(ends.length);
    ascii.set(this.ascii);
    this.ascii = ascii;
  }

  private growBytes(needed: number): void {
    if (needed > MAX_TABLE_BYTES) {
      throw new TableFullError(`the shared strings hold more than ${MAX_TABLE_BYTES} bytes of text`);
    }
    const bytes = Buffer.allocUnsafeSlow(Math.min(MAX_TABLE_BYTES, Math.max(needed, this.bytes.length * 2)));
    this.bytes.copy(bytes, 0, 0, this.used);
    this.bytes = bytes;
  }
}

/** Thrown by the table itself, which does not know the file; the reader adds it. */
class TableFullError extends Error {}

/** Where in the file the table comes from, for errors. */
export interface SharedStringsSource {
  file: string;
  part: string;
  /** The part's inflated size as the zip declares it (already held to the size limits). */
  declaredBytes: number;
  signal: AbortSignal | undefined;
}

/**
 * Reads `sharedStrings.xml` into a packed table. Each `<si>` is one entry: its `<t>` text, or its
 * rich-text runs joined; phonetic guides (`<rPh>`, the small kana above Japanese text) are not part
 * of the value Excel shows and are left out.
 * @throws FerryError SOURCE_XLSX_CORRUPT when the part is not well-formed XML.
 */
export async function readSharedStrings(
  chunks: AsyncIterable<Buffer>,
  source: SharedStringsSource,
): Promise<SharedStringTable> {
  const parser = createXmlParser();
  let table: SharedStringTable | undefined;
  let inItem = false;
  let phoneticDepth = 0;
  let inText = false;
  let text = '';

  parser.on('opentag', (tag) => {
    switch (localName(tag.name)) {
      case 'sst': {
        const claimed = Number(tag.attributes['uniqueCount'] ?? tag.attributes['count']);
        table ??= new SharedStringTable(source.declaredBytes, Number.isFinite(claimed) ? claimed : undefined);
        break;
      }
      case 'si':
        inItem = true;
        phoneticDepth = 0;
        text = '';
        break;
      case 'rPh':
        if (inItem) phoneticDepth++;
        break;
      case 't':
        inText = inItem && phoneticDepth === 0 && !tag.isSelfClosing;
        break;
    }
  });
  const onText = (value: string): void => {
    if (inText) text += value;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('closetag', (tag) => {
    switch (localName(tag.name)) {
      case 't':
        inText = false;
        break;
      case 'rPh':
        if (phoneticDepth > 0) phoneticDepth--;
        break;
      case 'si':
        if (!inItem) break;
        table ??= new SharedStringTable(source.declaredBytes);
        table.add(unescapeOoxml(text));
        text = '';
        inItem = false;
        break;
    }
  });
  try {
    await parseXmlPart(source.file, source.part, chunks, parser, source.signal);
  } catch (error) {
    if (error instanceof TableFullError) {
      throw new FerryError('SOURCE_XLSX_TOO_LARGE', `${source.part} in ${source.file}: ${error.message}`, {
        location: { file: source.file },
        cause: error,
        hint: 'Split the workbook, or export the sheet as CSV.',
      });
    }
    throw error;
  }
  return table ?? new SharedStringTable(16, 16);
}
