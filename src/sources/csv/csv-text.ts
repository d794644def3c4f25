import { FerryError } from '../../errors/index.ts';
import { sniffDelimiter } from './csv-delimiter.ts';
import { CsvTokenizer, type TokenizedRecord } from './csv-tokenizer.ts';

/** Longest field of a CSV read whole from memory (a lookup table's): the reader's own default. */
const MAX_FIELD = 1024 * 1024;

/**
 * The records of a small CSV held whole in memory (a lookup table), read by readCsv's tokenizer
 * and delimiter guess: a byte-order mark is dropped, blank lines are skipped, records may differ in
 * length (the caller says what it needs). A record that cannot be read (a quote never closed, a
 * field past 1 MiB) is not skipped: a table with a hole in it would answer wrongly.
 * @throws FerryError SOURCE_MALFORMED_RECORD with the line the record starts on.
 */
export function readCsvText(text: string, file: string): string[][] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const tokenizer = new CsvTokenizer({
    delimiter: sniffDelimiter(body, true).delimiter,
    maxFieldSize: MAX_FIELD,
    maxRecordSize: MAX_FIELD * 4,
  });
  const records: string[][] = [];
  let failure: FerryError | undefined;
  const sink = (record: TokenizedRecord): void => {
    // The reader's message goes on to say how it reads on after the bad record (`; the lines after
    // it are read again`): here nothing is read on, so only what is wrong is said.
    if (record.problem)
      failure ??= new FerryError(
        'SOURCE_MALFORMED_RECORD',
        `line ${record.problem.line}: ${record.problem.message.split('; ')[0]}`,
        { location: { file, row: records.length + 1 } },
      );
    else if (!record.blank) records.push(record.fields);
  };
  tokenizer.push(body, sink);
  tokenizer.finish(sink);
  if (failure) throw failure;
  return records;
}
