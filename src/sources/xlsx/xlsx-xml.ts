import { TextDecoder } from 'node:util';
import { SaxesParser } from 'saxes';
import { FerryError } from '../../errors/index.ts';

/**
 * Element name without its prefix: most writers put SpreadsheetML in the default namespace, but
 * some (older .NET libraries) write `<x:row>`; the prefix carries no meaning for us.
 */
export function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}

const ESCAPED_CHARACTER = /_x([0-9A-Fa-f]{4})_/g;

/**
 * Excel writes characters XML cannot hold (a carriage return, control characters) as `_xHHHH_`,
 * and a literal `_x` that would look like one as `_x005F_x`; reading them back gives the text
 * Excel shows.
 */
export function unescapeOoxml(text: string): string {
  if (!text.includes('_x')) return text;
  return text.replace(ESCAPED_CHARACTER, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/**
 * Turns the inflated bytes of a part into text. OOXML parts are UTF-8 or UTF-16 (with a BOM);
 * the decoder keeps characters split across chunks whole, and drops the BOM.
 */
export async function* xmlText(chunks: AsyncIterable<Buffer>): AsyncGenerator<string> {
  let decoder: TextDecoder | undefined;
  for await (const chunk of chunks) {
    if (!decoder) {
      const encoding =
        chunk[0] === 0xff && chunk[1] === 0xfe
          ? 'utf-16le'
          : chunk[0] === 0xfe && chunk[1] === 0xff
            ? 'utf-16be'
            : 'utf-8';
      decoder = new TextDecoder(encoding);
    }
    const text = decoder.decode(chunk, { stream: true });
    if (text !== '') yield text;
  }
  const rest = decoder?.decode() ?? '';
  if (rest !== '') yield rest;
}

/**
 * A parser that only tracks what we need: namespaces are not resolved (see {@link localName}) and
 * positions are not kept, which makes saxes noticeably faster on a 100 MB sheet; a fault is
 * located by the sheet row instead.
 */
export function createXmlParser(): SaxesParser {
  return new SaxesParser({ xmlns: false, position: false });
}

/** saxes starts its messages with a position when it has one; ours travels in the location. */
function bareMessage(error: Error): string {
  return error.message.replace(/^(?:[^:]*:)?\d+:\d+: /, '');
}

/** The error for a part that is not well-formed XML. */
export function malformedPart(
  file: string,
  part: string,
  error: Error,
  where: { sheet?: string; row?: number } = {},
): FerryError {
  const at = where.row === undefined ? '' : ` near row ${where.row}`;
  return new FerryError(
    'SOURCE_XLSX_CORRUPT',
    `${part} in ${file} is not well-formed XML${at}: ${bareMessage(error)}`,
    {
      location: {
        file,
        ...(where.sheet === undefined ? {} : { sheet: where.sheet }),
        ...(where.row === undefined ? {} : { row: where.row }),
      },
      cause: error,
      hint: 'The workbook may be damaged or written by a faulty tool; re-save it from Excel or LibreOffice, or export the sheet as CSV.',
    },
  );
}

/**
 * Runs a whole part through a parser whose handlers are already attached, for the parts read in
 * full before the sheet (styles, shared strings). The first XML fault stops the read.
 */
export async function parseXmlPart(
  file: string,
  part: string,
  chunks: AsyncIterable<Buffer>,
  parser: SaxesParser,
  signal: AbortSignal | undefined,
): Promise<void> {
  let failure: Error | undefined;
  parser.on('error', (error) => {
    failure ??= error;
  });
  for await (const text of xmlText(chunks)) {
    signal?.throwIfAborted();
    parser.write(text);
    if (failure) throw malformedPart(file, part, failure);
  }
  parser.close();
  if (failure) throw malformedPart(file, part, failure);
}
