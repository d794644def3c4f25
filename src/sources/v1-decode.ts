import iconv from 'iconv-lite';
import { FerryError } from '../errors/index.ts';

/** Turns chunks of bytes into text, keeping characters split across chunks whole. */
export interface TextChunkDecoder {
  write(chunk: Buffer): string;
  end(): string;
}

const DECLARED_ENCODING = /^<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/;

/**
 * Picks the decoder for a file from its first bytes: a byte-order mark wins, then the encoding
 * an XML declaration names, then UTF-8. The BOM is dropped either way.
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
    const decoder = new TextDecoder('utf-8');
    return {
      write: (chunk) => decoder.decode(chunk, { stream: true }),
      end: () => decoder.decode(),
    };
  }
  if (!iconv.encodingExists(encoding)) {
    throw new FerryError('SOURCE_ENCODING', `${file} declares the encoding ${JSON.stringify(encoding)}, which crm-ferry cannot decode`, {
      location: { file, row: 1 },
      hint: 'Convert the file to UTF-8 (e.g. iconv -f <encoding> -t UTF-8) and fix the XML declaration.',
    });
  }
  const decoder = iconv.getDecoder(encoding);
  return {
    write: (chunk) => decoder.write(chunk),
    end: () => decoder.end() ?? '',
  };
}
