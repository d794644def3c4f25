import {
  type FieldRow,
  sourceBatches,
  sourceFieldBatches,
  type SourceItem,
  type SourceRowError,
} from '../sources/index.ts';
import type { CompiledMapping } from './compile.ts';
import type { MappedItem } from './types.ts';

/** What a source item that is not a row (the reader could not read it) becomes: a reject with the reader's reason. */
function unreadable(item: SourceRowError): MappedItem {
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
 * A source that offers batches is read a batch at a time and each batch mapped at once, while its
 * rows are fresh in the cache; its items are then handed out with the single wait per item that
 * reading the source alone would cost. Rows given as fields (SOURCE_FIELD_BATCHES) are read by
 * position, with no object of named values made for them unless a row is rejected. Other sources
 * are mapped item by item.
 */
export function mapRows(
  items: AsyncIterable<SourceItem>,
  compiled: CompiledMapping,
): AsyncIterableIterator<MappedItem> {
  const mapItem = (item: SourceItem): MappedItem => (item.kind === 'row' ? compiled.mapRow(item) : unreadable(item));
  const fieldBatches = sourceFieldBatches(items);
  if (fieldBatches !== undefined) return mapFieldBatches(fieldBatches(), compiled);
  const batches = sourceBatches(items);
  if (batches !== undefined) return mapBatches(batches(), mapItem);
  // A plain iterator rather than an async generator: mapping a row is synchronous, and a
  // generator's await and yield cost more per row than mapping most rows does.
  const source = items[Symbol.asyncIterator]();
  const step = (result: IteratorResult<SourceItem>): IteratorResult<MappedItem> =>
    result.done ? { done: true, value: undefined } : { done: false, value: mapItem(result.value) };
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

/** Maps rows given as fields (SOURCE_FIELD_BATCHES), a batch at a time; see mapRows. */
export function mapFieldBatches(
  batches: AsyncGenerator<Array<FieldRow | SourceRowError>>,
  compiled: CompiledMapping,
): AsyncGenerator<MappedItem> {
  return mapBatches(batches, (item) => (item.kind === 'fields' ? compiled.mapFields(item) : unreadable(item)));
}

async function* mapBatches<Item>(
  batches: AsyncGenerator<Item[]>,
  mapItem: (item: Item) => MappedItem,
): AsyncGenerator<MappedItem> {
  for await (const batch of batches) {
    const mapped: MappedItem[] = new Array(batch.length);
    for (let i = 0; i < batch.length; i++) mapped[i] = mapItem(batch[i] as Item);
    yield* mapped;
  }
}
