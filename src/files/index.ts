/**
 * Files crm-ferry writes: one atomic writer (temporary file, sync, rename) and one CSV writer
 * (quoting, formulas neutralised, framing for Excel), and the names they use.
 */
export {
  AtomicFile,
  type AtomicFileOptions,
  jsonText,
  replaceFile,
  writeFileAtomic,
  type WriteFileAtomicOptions,
} from './atomic-file.ts';
export { ChunkedText, sendTo, TEXT_CHUNK } from './chunked-text.ts';
export {
  csvDocument,
  csvField,
  csvFieldForPeople,
  CsvFile,
  type CsvFraming,
  csvLineEnd,
  csvStart,
  CsvText,
} from './csv.ts';
export { drained } from './drained.ts';
export { fileNameFor, MAX_FILE_NAME_BYTES, temporaryNameFor, TEMPORARY_NAME } from './file-name.ts';
export { looksLikeFormula, neutraliseFormula } from './formula.ts';
export { columnLetters, serialOf, serialToDate, UNIX_EPOCH_SERIAL } from './xlsx-grid.ts';
