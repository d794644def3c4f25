import type { SourceItem } from '../sources/types.ts';
import type { CompiledMapping } from './compile.ts';
import type { MappedItem } from './types.ts';

/** What a source item that is not a row (the reader could not read it) becomes: a reject with the reader's reason. */
function unreadable(item: Exclude<SourceItem, { kind: 'row' }>): MappedItem {
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
  return rejected;
}

/**
 * Maps a source's items one by one: rows become records, rejects or skips; rows the reader could
 * not read become rejects carrying the reader's code, message and raw text. Bad data never stops
 * the stream; only bugs throw. The caller checks the header (compiled.checkColumns) first.
 *
 * Written as a plain iterator rather than an async generator: mapping a row is synchronous, and a
 * generator's await and yield cost more per row than mapping most rows does. Each item costs one
 * `then` on the source's own promise.
 */
export function mapRows(items: AsyncIterable<SourceItem>, compiled: CompiledMapping): AsyncIterableIterator<MappedItem> {
  const source = items[Symbol.asyncIterator]();
  const step = (result: IteratorResult<SourceItem>): IteratorResult<MappedItem> => {
    if (result.done) return { done: true, value: undefined };
    const item = result.value;
    return { done: false, value: item.kind === 'row' ? compiled.mapRow(item) : unreadable(item) };
  };
  const iterator: AsyncIterableIterator<MappedItem> = {
    next: () => source.next().then(step),
    // Stopping early (break, an error in the consumer) closes the source, so its file is closed.
    return: async () => {
      await source.return?.();
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}
