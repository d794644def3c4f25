import { open as openFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import type { Entry, ZipFile } from 'yauzl';
import { FerryError } from '../../errors/index.ts';

/** Limits applied to the zip container before any part of it is inflated. */
export interface XlsxContainerLimits {
  /** Largest declared uncompressed size of any one part we are about to inflate. */
  maxUncompressedBytes: number;
  /** Largest declared uncompressed/compressed ratio of a part larger than {@link RATIO_FLOOR_BYTES}. */
  maxCompressionRatio: number;
}

/** One part of the zip as its central directory declares it. */
export interface XlsxPart {
  name: string;
  compressedSize: number;
  uncompressedSize: number;
}

/** The central directory of a workbook, with its two small structural parts already read. */
export interface XlsxContainer {
  parts: Map<string, XlsxPart>;
  workbookXml: string;
  /** `xl/_rels/workbook.xml.rels`, or '' when the workbook has none (then sheet paths are guessed). */
  workbookRelsXml: string;
}

/**
 * Small parts compress badly, and tiny parts with high ratios are harmless; the ratio test only
 * makes sense once a part is big enough to hurt.
 */
export const RATIO_FLOOR_BYTES = 1024 * 1024;

/** workbook.xml and its rels list sheet names only; anything bigger than this is not a real workbook. */
const STRUCTURE_PART_LIMIT = 16 * 1024 * 1024;

const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const EMPTY_ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x05, 0x06]);
const CFB_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
/** Office writes an encrypted workbook as a compound file holding a stream of this name (UTF-16LE). */
const ENCRYPTED_STREAM_NAME = Buffer.from('EncryptedPackage', 'utf16le');
/** How much of a compound file we scan for that stream name; its directory sits near the start in practice. */
const CFB_SCAN_BYTES = 4 * 1024 * 1024;

/**
 * Opens the zip container of a workbook and reads its central directory, refusing files that are
 * not zips, encrypted workbooks, legacy .xls files and parts whose declared size would inflate
 * beyond the limits. Nothing large is inflated here.
 */
export async function openXlsxContainer(file: string): Promise<XlsxContainer> {
  await checkMagic(file);
  const zip = await openZip(file);
  try {
    const parts = new Map<string, XlsxPart>();
    const entries = new Map<string, Entry>();
    for await (const entry of iterateEntries(zip, file)) {
      parts.set(entry.fileName, {
        name: entry.fileName,
        compressedSize: entry.compressedSize,
        uncompressedSize: entry.uncompressedSize,
      });
      entries.set(entry.fileName, entry);
    }
    const workbookEntry = entries.get('xl/workbook.xml');
    if (!workbookEntry) {
      throw new FerryError(
        'SOURCE_XLSX_CORRUPT',
        `${file} is a zip file but not an Excel workbook: it has no xl/workbook.xml`,
        {
          location: { file },
          hint: 'Open the file in Excel or LibreOffice and save it as "Excel Workbook (.xlsx)".',
        },
      );
    }
    const workbookXml = await readSmallEntry(zip, workbookEntry, file);
    const relsEntry = entries.get('xl/_rels/workbook.xml.rels');
    const workbookRelsXml = relsEntry ? await readSmallEntry(zip, relsEntry, file) : '';
    return { parts, workbookXml, workbookRelsXml };
  } finally {
    zip.close();
  }
}

/**
 * Refuses a part whose declared size or compression ratio is out of bounds. Declared sizes can lie;
 * this catches crafted bombs cheaply, and the streaming parser keeps memory bounded for the rest.
 */
export function checkPartSize(file: string, part: XlsxPart, limits: XlsxContainerLimits): void {
  if (part.uncompressedSize > limits.maxUncompressedBytes) {
    throw new FerryError(
      'SOURCE_XLSX_TOO_LARGE',
      `${part.name} in ${file} declares ${part.uncompressedSize} bytes uncompressed; the limit is ${limits.maxUncompressedBytes}`,
      {
        location: { file },
        hint: 'If the workbook is genuine, raise the limit (maxUncompressedBytes) or export the sheet as CSV.',
      },
    );
  }
  if (part.uncompressedSize >= RATIO_FLOOR_BYTES) {
    const ratio = part.uncompressedSize / Math.max(1, part.compressedSize);
    if (ratio > limits.maxCompressionRatio) {
      throw new FerryError(
        'SOURCE_XLSX_TOO_LARGE',
        `${part.name} in ${file} declares a compression ratio of ${Math.round(ratio)}:1; more than ${limits.maxCompressionRatio}:1 looks like a zip bomb`,
        {
          location: { file },
          hint: 'If the workbook is genuine, raise the limit (maxCompressionRatio) or export the sheet as CSV.',
        },
      );
    }
  }
}

async function checkMagic(file: string): Promise<void> {
  let handle;
  try {
    handle = await openFile(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new FerryError('SOURCE_NOT_FOUND', `${file} does not exist`, {
        location: { file },
        cause: error,
        hint: 'Check the path; relative paths are resolved from the current directory.',
      });
    }
    throw unreadable(file, error);
  }
  try {
    const head = Buffer.alloc(8);
    const { bytesRead } = await handle.read(head, 0, 8, 0).catch((error: unknown) => {
      throw unreadable(file, error);
    });
    if (bytesRead >= 8 && head.equals(CFB_MAGIC)) {
      const scan = Buffer.alloc(CFB_SCAN_BYTES);
      const { bytesRead: scanned } = await handle.read(scan, 0, CFB_SCAN_BYTES, 0);
      if (scan.subarray(0, scanned).includes(ENCRYPTED_STREAM_NAME)) {
        throw new FerryError('SOURCE_XLSX_ENCRYPTED', `${file} is a password-protected workbook`, {
          location: { file },
          hint: 'Open it in Excel, remove the password (File > Info > Protect Workbook > Encrypt with Password), save, and try again.',
        });
      }
      throw new FerryError(
        'SOURCE_FORMAT_UNKNOWN',
        `${file} is an OLE2 compound file (a legacy .xls workbook?), not an .xlsx workbook`,
        {
          location: { file },
          hint: 'Open it in Excel or LibreOffice and save it as "Excel Workbook (.xlsx)", or export the sheet as CSV.',
        },
      );
    }
    const magic = head.subarray(0, 4);
    if (bytesRead < 4 || !(magic.equals(ZIP_MAGIC) || magic.equals(EMPTY_ZIP_MAGIC))) {
      throw new FerryError(
        'SOURCE_XLSX_CORRUPT',
        `${file} is not an Excel workbook: it does not start with a zip signature`,
        {
          location: { file },
          hint: 'The file may be a CSV or another format renamed to .xlsx; open it in a text editor to check, or read it as CSV.',
        },
      );
    }
  } finally {
    await handle.close();
  }
}

function unreadable(file: string, error: unknown): FerryError {
  return new FerryError('SOURCE_UNREADABLE', `${file} cannot be read: ${(error as Error).message}`, {
    location: { file },
    cause: error,
    hint: 'Check that the file is readable by the current user and is not a directory.',
  });
}

function corrupt(file: string, error: unknown, part?: string): FerryError {
  const where = part === undefined ? '' : ` (part ${part})`;
  return new FerryError('SOURCE_XLSX_CORRUPT', `${file} is a damaged workbook${where}: ${(error as Error).message}`, {
    location: { file },
    cause: error,
    hint: 'The file may be truncated (an interrupted download or copy); fetch it again or re-save it from Excel.',
  });
}

function openZip(file: string): Promise<ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(
      file,
      { lazyEntries: true, autoClose: false, strictFileNames: false, validateEntrySizes: true },
      (error, zip) => {
        if (error || !zip) reject(corrupt(file, error ?? new Error('no zip file')));
        else resolve(zip);
      },
    );
  });
}

async function* iterateEntries(zip: ZipFile, file: string): AsyncGenerator<Entry> {
  for (;;) {
    const next = await new Promise<Entry | null>((resolve, reject) => {
      const onEntry = (entry: Entry): void => {
        cleanup();
        resolve(entry);
      };
      const onEnd = (): void => {
        cleanup();
        resolve(null);
      };
      const onError = (error: unknown): void => {
        cleanup();
        reject(corrupt(file, error));
      };
      const cleanup = (): void => {
        zip.off('entry', onEntry);
        zip.off('end', onEnd);
        zip.off('error', onError);
      };
      zip.on('entry', onEntry);
      zip.on('end', onEnd);
      zip.on('error', onError);
      zip.readEntry();
    });
    if (next === null) return;
    if (next.isEncrypted()) {
      throw new FerryError('SOURCE_XLSX_ENCRYPTED', `${file} holds encrypted zip entries (${next.fileName})`, {
        location: { file },
        hint: 'Remove the password from the workbook in Excel and save it again.',
      });
    }
    yield next;
  }
}

/** The parts of one workbook, read from a single open of the zip. */
export interface XlsxPartReader {
  has(name: string): boolean;
  /**
   * Inflates a part once and throws the bytes away, so that damage (a corrupt deflate stream, a
   * part longer than its declared size) is found before the first row is handed out rather than
   * half-way through an import.
   */
  verify(name: string): Promise<void>;
  /**
   * The inflated bytes of a part, chunk by chunk. yauzl holds the part to its declared size, which
   * makes the size guard trustworthy; damage surfaces as SOURCE_XLSX_CORRUPT naming the part.
   * Stopping the iteration early releases the part.
   */
  read(name: string): AsyncGenerator<Buffer>;
  close(): void;
}

/** Opens the zip of a workbook for reading its parts; the caller must close it. */
export async function openXlsxParts(file: string): Promise<XlsxPartReader> {
  const zip = await openZip(file);
  const entries = new Map<string, Entry>();
  try {
    for await (const entry of iterateEntries(zip, file)) entries.set(entry.fileName, entry);
  } catch (error) {
    zip.close();
    throw error;
  }
  const entryOf = (name: string): Entry => {
    const entry = entries.get(name);
    if (!entry)
      throw new FerryError(
        'INTERNAL',
        `part ${name} of ${file} was read without checking that it exists; this is a bug in crm-ferry`,
        { location: { file } },
      );
    return entry;
  };
  return {
    has: (name) => entries.has(name),
    verify: (name) => drainEntry(zip, entryOf(name), file),
    read: (name) => readEntry(zip, entryOf(name), file),
    close: () => zip.close(),
  };
}

async function* readEntry(zip: ZipFile, entry: Entry, file: string): AsyncGenerator<Buffer> {
  const stream = await new Promise<Readable>((resolve, reject) => {
    zip.openReadStream(entry, (error, opened) => {
      if (error || !opened) reject(corrupt(file, error ?? new Error(`cannot read ${entry.fileName}`), entry.fileName));
      else resolve(opened);
    });
  });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) yield chunk;
  } catch (error) {
    throw corrupt(file, error, entry.fileName);
  } finally {
    stream.destroy();
  }
}

function drainEntry(zip: ZipFile, entry: Entry, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (error, stream) => {
      if (error || !stream) {
        reject(corrupt(file, error ?? new Error(`cannot read ${entry.fileName}`), entry.fileName));
        return;
      }
      stream.on('error', (streamError) => reject(corrupt(file, streamError, entry.fileName)));
      stream.on('end', () => resolve());
      stream.resume();
    });
  });
}

function readSmallEntry(zip: ZipFile, entry: Entry, file: string): Promise<string> {
  if (entry.uncompressedSize > STRUCTURE_PART_LIMIT) {
    return Promise.reject(
      new FerryError(
        'SOURCE_XLSX_TOO_LARGE',
        `${entry.fileName} in ${file} declares ${entry.uncompressedSize} bytes; a workbook index is never that big`,
        {
          location: { file },
        },
      ),
    );
  }
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (error, stream) => {
      if (error || !stream) {
        reject(corrupt(file, error ?? new Error(`cannot read ${entry.fileName}`)));
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', (streamError) => reject(corrupt(file, streamError)));
      stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
  });
}
