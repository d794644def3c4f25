import type { CommonReadOptions, SourceItem } from './types.ts';

export interface V1ReadOptions extends Omit<CommonReadOptions, 'headerRow'> {
  /** Which records to read when a file holds several kinds; by default the top-level list's. */
  record?: 'person' | 'organisation' | 'party' | 'opportunity' | 'kase' | 'task' | 'historyItem';
}

/** Placeholder: the legacy v1 export reader (XML or JSON) is being written. */
export async function* readV1Export(_file: string, _options: V1ReadOptions = {}): AsyncGenerator<SourceItem> {
  throw new Error('readV1Export is not written yet');
}
