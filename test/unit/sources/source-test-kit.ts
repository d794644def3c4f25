import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FerryError } from '../../../src/errors/index.ts';
import type { SourceItem, SourceWarning } from '../../../src/sources/types.ts';

/** Reads every item of a reader, with the warnings it gave. */
export async function collect(
  items: AsyncIterable<SourceItem>,
  warnings: SourceWarning[] = [],
): Promise<{ items: SourceItem[]; warnings: SourceWarning[] }> {
  const out: SourceItem[] = [];
  for await (const item of items) out.push(item);
  return { items: out, warnings };
}

/** Runs a reader to its end and returns the FerryError it threw, with the items yielded before. */
export async function failureOf(
  items: AsyncIterable<SourceItem>,
): Promise<{ error: FerryError; before: SourceItem[] }> {
  const before: SourceItem[] = [];
  try {
    for await (const item of items) before.push(item);
  } catch (error) {
    if (error instanceof FerryError) return { error, before };
    throw new Error(`expected a FerryError, got ${String(error)}`, { cause: error });
  }
  throw new Error(`expected a FerryError, but the reader finished with ${before.length} items`);
}

/** A temporary directory removed by the returned function. */
export function scratchDir(): { dir: string; path: (name: string) => string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-src-'));
  return { dir, path: (name) => join(dir, name), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function rowValues(items: SourceItem[]): Array<Record<string, unknown>> {
  return items.map((item) => {
    if (item.kind !== 'row') throw new Error(`expected a row, got an error: ${item.error.message}`);
    return item.values;
  });
}
