import { isAscii, isUtf8 } from 'node:buffer';
import { TextDecoder } from 'node:util';
import type Iconv from 'iconv-lite';
import { iconvLite } from '../iconv.ts';
import { FerryError } from '../../errors/index.ts';

/** Canonical names of the encodings crm-ferry tells apart on its own. */
export type DetectedEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';

export interface EncodingDecision {
  /** The encoding used to decode; a name iconv-lite knows when it was given by the user. */
  encoding: string;
  /** Bytes of byte-order mark to skip at the start. */
  bomLength: number;
  /** How the decision was made, for the inspect report and warnings. */
  basis: 'bom' | 'option' | 'valid-utf8' | 'invalid-utf8' | 'utf16-pattern';
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];

/** Maps the spellings people use to one name; anything else must be known to iconv-lite. */
export function normalizeEncodingName(name: string): string {
  const key = name.trim().toLowerCase().replace(/[_\s]/g, '-');
  if (key === 'utf8' || key === 'utf-8') return 'utf-8';
  if (key === 'utf16le' || key === 'utf-16le' || key === 'ucs-2' || key === 'ucs2') return 'utf-16le';
  if (key === 'utf16be' || key === 'utf-16be') return 'utf-16be';
  if (key === 'windows-1252' || key === 'cp1252' || key === 'win1252' || key === 'ansi') return 'windows-1252';
  if (!iconvLite().encodingExists(key)) {
    throw new FerryError('CONFIG_INVALID', `unknown encoding ${JSON.stringify(name)}`, {
      hint: 'Use utf-8, utf-16le, utf-16be, windows-1252, or another name iconv-lite knows (latin1, iso-8859-15, macintosh ...).',
    });
  }
  return key;
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  if (bytes.length < prefix.length) return false;
  return prefix.every((b, i) => bytes[i] === b);
}

/** Looks at the zero bytes of a prefix: ASCII text in UTF-16 has one in every other byte. */
function guessUtf16(prefix: Uint8Array): 'utf-16le' | 'utf-16be' | undefined {
  const length = Math.min(prefix.length, 4096) & ~1;
  if (length < 4) return undefined;
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < length; i += 2) {
    if (prefix[i] === 0) evenZeros++;
    if (prefix[i + 1] === 0) oddZeros++;
  }
  const pairs = length / 2;
  if (oddZeros > pairs * 0.4 && evenZeros < pairs * 0.05) return 'utf-16le';
  if (evenZeros > pairs * 0.4 && oddZeros < pairs * 0.05) return 'utf-16be';
  return undefined;
}

/** UTF-8 validity of a prefix that may end in the middle of a character. */
function isUtf8Prefix(prefix: Uint8Array, complete: boolean): boolean {
  if (isUtf8(prefix)) return true;
  if (complete) return false;
  // Drop an unfinished sequence at the cut (at most 3 bytes) and test again.
  for (let cut = 1; cut <= 3 && cut < prefix.length; cut++) {
    const b = prefix[prefix.length - cut] as number;
    if (b >= 0xc0) return isUtf8(prefix.subarray(0, prefix.length - cut));
    if (b < 0x80) return false;
  }
  return false;
}

/**
 * Decides the encoding from the first bytes of a file. `complete` says the prefix is the whole file.
 * Throws SOURCE_FORMAT_UNKNOWN for binary content.
 */
export function detectEncoding(
  prefix: Uint8Array,
  complete: boolean,
  override: string | undefined,
  file: string,
): EncodingDecision {
  const bom = startsWith(prefix, UTF8_BOM)
    ? { encoding: 'utf-8', bomLength: 3 }
    : startsWith(prefix, [0xff, 0xfe])
      ? { encoding: 'utf-16le', bomLength: 2 }
      : startsWith(prefix, [0xfe, 0xff])
        ? { encoding: 'utf-16be', bomLength: 2 }
        : undefined;
  if (override !== undefined) {
    const encoding = normalizeEncodingName(override);
    // A BOM of the encoding asked for is still not data.
    return { encoding, bomLength: bom && bom.encoding === encoding ? bom.bomLength : 0, basis: 'option' };
  }
  if (bom) return { ...bom, basis: 'bom' };
  const utf16 = guessUtf16(prefix);
  if (utf16) return { encoding: utf16, bomLength: 0, basis: 'utf16-pattern' };
  if (prefix.subarray(0, 8192).includes(0)) {
    throw new FerryError('SOURCE_FORMAT_UNKNOWN', 'the file holds binary data (zero bytes), not CSV text', {
      location: { file },
      hint: 'Check that this is the file the customer meant; spreadsheets must be saved as .xlsx or CSV.',
    });
  }
  if (isUtf8Prefix(prefix, complete)) return { encoding: 'utf-8', bomLength: 0, basis: 'valid-utf8' };
  return { encoding: 'windows-1252', bomLength: 0, basis: 'invalid-utf8' };
}

/** Where the first invalid UTF-8 sequence starts in `bytes`, or -1. Only used to word an error. */
export function findInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i] as number;
    if (b < 0x80) {
      i++;
      continue;
    }
    const need = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (need < 0) return i;
    // A sequence cut by the end of the bytes is not invalid yet.
    if (i + need >= bytes.length) return -1;
    if (!isUtf8(bytes.subarray(i, i + need + 1))) return i;
    i += need + 1;
  }
  return -1;
}

export interface EncodingSwitch {
  /** Byte offset in the file where the first byte that is not UTF-8 was met. */
  byteOffset: number;
}

/**
 * Turns the file's bytes into text, chunk by chunk. When UTF-8 was only a guess (the prefix was
 * valid UTF-8) and later bytes are not UTF-8, there are two cases: everything before was plain ASCII,
 * which reads the same in Windows-1252, so decoding switches to Windows-1252 from that chunk on
 * and `onSwitch` is told; or UTF-8 characters were already decoded, so the file mixes encodings and
 * a SOURCE_ENCODING error is thrown rather than guessing. A UTF-8 encoding the user asked for never
 * switches: invalid bytes are an error.
 */
export class ChunkDecoder {
  private encoding: string;
  private readonly mayFallBack: boolean;
  private utf8: TextDecoder | undefined;
  private other: ReturnType<typeof Iconv.getDecoder> | undefined;
  private asciiSoFar = true;
  private offset = 0;

  constructor(
    decision: EncodingDecision,
    private readonly file: string,
    private readonly onSwitch: (info: EncodingSwitch) => void,
  ) {
    this.encoding = decision.encoding;
    this.offset = decision.bomLength;
    this.mayFallBack = decision.basis === 'valid-utf8';
    this.open();
  }

  /** The encoding in use now (it changes after a fall-back). */
  get current(): string {
    return this.encoding;
  }

  private open(): void {
    if (this.encoding === 'utf-8') this.utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    else
      this.other = iconvLite().getDecoder(this.encoding === 'windows-1252' ? 'win1252' : this.encoding, {
        stripBOM: false,
      });
  }

  /** `context` says where reading is, for the error message. */
  write(chunk: Buffer, context: () => string): string {
    const start = this.offset;
    this.offset += chunk.length;
    if (this.utf8) {
      try {
        const text = this.utf8.decode(chunk, { stream: true });
        if (this.asciiSoFar && !isAscii(chunk)) this.asciiSoFar = false;
        return text;
      } catch (error) {
        const at = findInvalidUtf8(chunk);
        const byteOffset = start + (at < 0 ? 0 : at);
        if (this.mayFallBack && this.asciiSoFar) {
          this.utf8 = undefined;
          this.encoding = 'windows-1252';
          this.open();
          this.onSwitch({ byteOffset });
          return (this.other as NonNullable<typeof this.other>).write(chunk);
        }
        throw new FerryError(
          'SOURCE_ENCODING',
          `byte ${byteOffset} is not valid UTF-8 (${context()}), but earlier parts of the file were UTF-8 text: the file mixes encodings`,
          {
            location: { file: this.file },
            cause: error,
            hint: 'Re-save the file as UTF-8, or pass --encoding windows-1252 (or the right encoding) to read it all one way.',
          },
        );
      }
    }
    return (this.other as NonNullable<typeof this.other>).write(chunk);
  }

  end(context: () => string): string {
    if (this.utf8) {
      try {
        return this.utf8.decode();
      } catch (error) {
        throw new FerryError('SOURCE_ENCODING', `the file ends in the middle of a UTF-8 character (${context()})`, {
          location: { file: this.file },
          cause: error,
          hint: 'The file is probably cut short; ask for a complete copy.',
        });
      }
    }
    return (this.other as NonNullable<typeof this.other>).end() ?? '';
  }
}
