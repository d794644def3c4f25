import type { CommonReadOptions, SourceItem } from './types.ts';

export interface XlsxReadOptions extends CommonReadOptions {
  /** Sheet name or 1-based index. @default 1 */
  sheet?: string | number;
}

/** Placeholder: the XLSX reader is being written. */
export async function* readXlsx(_file: string, _options: XlsxReadOptions = {}): AsyncGenerator<SourceItem> {
  throw new Error('readXlsx is not written yet');
}

/** Placeholder: lists the sheets of a workbook. */
export async function listXlsxSheets(_file: string): Promise<string[]> {
  throw new Error('listXlsxSheets is not written yet');
}
