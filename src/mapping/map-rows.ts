import type { SourceItem } from '../sources/types.ts';
import type { CompiledMapping } from './compile.ts';
import type { MappedItem } from './types.ts';

/**
 * Maps a source's items one by one: rows become records, rejects or skips; rows the reader could
 * not read become rejects carrying the reader's code, message and raw text. Bad data never stops
 * the stream; only bugs throw. The caller checks the header (compiled.checkColumns) first.
 */
export async function* mapRows(items: AsyncIterable<SourceItem>, compiled: CompiledMapping): AsyncGenerator<MappedItem> {
  for await (const item of items) {
    if (item.kind === 'row') {
      yield compiled.mapRow(item);
      continue;
    }
    const rejected: MappedItem = {
      kind: 'rejected',
      row: item.row,
      location: item.location,
      key: null,
      field: '',
      code: item.error.code,
      message: item.error.message,
      values: null,
    };
    if (item.raw !== undefined) rejected.raw = item.raw;
    yield rejected;
  }
}
