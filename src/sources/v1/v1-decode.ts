import { createReadStream } from 'node:fs';
import { iconvLite } from '../iconv.ts';
import { FerryError } from '../../errors/index.ts';
import { findInvalidUtf8 } from '../csv/csv-encoding.ts';

/** Turns chunks of bytes into text, keeping characters split across chunks whole. */
export interface TextChunkDecoder {
  write(chunk: Buffer): string;
  end(): string;
}

const DECLARED_ENCODING = /^<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/;

/**
 * Picks the decoder for a file from its first bytes: a byte-order mark wins, then the encoding
 * an XML declaration names, then UTF-8. The BOM is dropped either way. UTF-8 is read strictly:
 * a byte that is not UTF-8 is SOURCE_ENCODING with its offset, as in CSV, never a silent U+FFFD
 * in a name written to the account.
 */
export function chooseDecoder(file: string, head: Buffer): TextChunkDecoder {
  let encoding = 'utf-8';
  if (head[0] === 0xff && head[1] === 0xfe) encoding = 'utf-16le';
  else if (head[0] === 0xfe && head[1] === 0xff) encoding = 'utf-16be';
  else if (!(head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf)) {
    const declared = DECLARED_ENCODING.exec(head.subarray(0, 256).toString('latin1'));
    if (declared?.[1]) encoding = declared[1].toLowerCase();
  }
  if (encoding === 'utf-8' || encoding === 'utf8' || encoding === 'us-ascii' || encoding === 'ascii') {
    return strictUtf8(file);
  }
  if (!iconvLite().encodingExists(encoding)) {
    throw new FerryError(
      'SOURCE_ENCODING',
      `${file} declares the encoding ${JSON.stringify(encoding)}, which crm-ferry cannot decode`,
      {
        location: { file, row: 1 },
        hint: 'Convert the file to UTF-8 (e.g. iconv -f <encoding> -t UTF-8) and fix the XML declaration.',
      },
    );
  }
  const decoder = iconvLite().getDecoder(encoding);
  return {
    write: (chunk) => decoder.write(chunk),
    end: () => decoder.end() ?? '',
  };
}

/** UTF-8 that refuses what is not: SOURCE_ENCODING naming the byte, counted from the start of the file (or page). */
function strictUtf8(file: string): TextChunkDecoder {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let offset = 0;
  const refuse = (at: number, cause: unknown, cut: boolean): FerryError =>
    new FerryError(
      'SOURCE_ENCODING',
      cut ? 'the text ends in the middle of a UTF-8 character' : `byte ${at} is not valid UTF-8`,
      {
        location: { file },
        cause,
        hint: cut
          ? 'The file or answer is probably cut short; read a complete copy.'
          : 'Legacy v1 exports and the v1 interface are UTF-8 unless an XML declaration names another encoding: re-save the export as UTF-8 (or name its encoding in the declaration); for a live account, read an export file of the list instead.',
      },
    );
  return {
    write: (chunk) => {
      const start = offset;
      offset += chunk.length;
      try {
        return decoder.decode(chunk, { stream: true });
      } catch (error) {
        const at = findInvalidUtf8(chunk);
        throw refuse(start + Math.max(0, at), error, false);
      }
    },
    end: () => {
      try {
        return decoder.decode();
      } catch (error) {
        throw refuse(offset, error, true);
      }
    },
  };
}

/**
 * Reads the file, or `chunks` instead of it (a page of the live v1 interface), as text in the
 * encoding its first bytes name. Each piece of text goes to `write`, then what `drain` has ready is
 * handed on, so records come out as the bytes come in. The file is closed however reading ends.
 */
export async function* readDecoded<T>(
  file: string,
  options: { signal: AbortSignal | undefined; chunks?: Iterable<Buffer> | AsyncIterable<Buffer> },
  write: (text: string) => void,
  drain: () => Generator<T>,
): AsyncGenerator<T, void> {
  const stream = options.chunks ? undefined : createReadStream(file, { highWaterMark: 64 * 1024 });
  let decoder: TextChunkDecoder | undefined;
  try {
    for await (const chunk of (options.chunks ?? stream) as AsyncIterable<Buffer>) {
      options.signal?.throwIfAborted();
      decoder ??= chooseDecoder(file, chunk);
      write(decoder.write(chunk));
      yield* drain();
    }
    if (decoder) write(decoder.end());
  } finally {
    stream?.destroy();
  }
}
