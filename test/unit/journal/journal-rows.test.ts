import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FerryError } from '../../../src/errors/index.ts';
import { blankRow, JournalWriter, journalLine, loadJournal, type JournalEntry } from '../../../src/journal/index.ts';

const at = '2026-01-01T00:00:00.000Z';
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'crm-ferry-journal-rows-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A person's body of about 300 bytes, as an import writes them. */
function body(i: number): Record<string, unknown> {
  return {
    type: 'person',
    firstName: `First${i}`,
    lastName: `Last${i}`,
    jobTitle: 'Head of Procurement',
    emailAddresses: [{ type: 'Work', address: `person${i}@example.org` }],
    phoneNumbers: [{ type: 'Work', number: '+442071234567' }],
    organisation: { id: 100_000 + (i % 5000) },
    tags: [{ name: 'customer' }, { name: 'newsletter' }],
    fields: [{ definition: 12, value: '2023-01-15' }],
  };
}

function createdRows(file: string, rows: number): void {
  const lines: string[] = [];
  for (let i = 0; i < rows; i++) {
    lines.push(
      journalLine({
        t: 'intent',
        k: `row-${i}`,
        op: 'create',
        run: 'run-1',
        at,
        fp: `fp-${String(i).padStart(19, '0')}`,
        body: body(i),
      }),
    );
    lines.push(
      journalLine({
        t: 'done',
        k: `row-${i}`,
        op: 'create',
        run: 'run-1',
        at,
        id: 1_000_000 + i,
        fp: `fp-${String(i).padStart(19, '0')}`,
      }),
    );
  }
  writeFileSync(file, lines.join(''));
}

/** The heap in use after a full collection, with the typed arrays' memory (outside the heap). */
function heapUsed(): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

describe('the journal index (loaded rows)', () => {
  it('costs at most 120 bytes a row (heap and typed arrays), its bodies left in the journal', async () => {
    const rows = 50_000;
    const file = join(dir, 'people.jsonl');
    createdRows(file, rows);
    const before = heapUsed();
    const loaded = await loadJournal(file);
    const perRow = (heapUsed() - before) / rows;
    expect(loaded.rows.size).toBe(rows);
    expect(loaded.rows.heldBodies).toBe(0);
    // A key of 9-10 characters as its bytes and a fingerprint of 22 as 22 bytes, the columns and
    // the table, each grown by doubling: about 96 bytes at 50,000 rows. A string a row (a key, a
    // fingerprint) would add 40-60 bytes, a JS object a row more: this holds the index compact.
    expect(perRow).toBeLessThan(120);
    expect(loaded.rows.columnBytes / rows).toBeLessThanOrEqual(100);
  });

  it('reads a body again from its line when asked, and knows every row by its whole key', async () => {
    const file = join(dir, 'people.jsonl');
    createdRows(file, 3000);
    const loaded = await loadJournal(file);
    expect(loaded.rows.get('row-1234')?.body).toEqual(body(1234));
    expect(loaded.rows.get('row-1234')?.id).toBe(1_001_234);
    expect(loaded.rows.get('row-2999')?.fp).toBe(`fp-${String(2999).padStart(19, '0')}`);
    expect(loaded.rows.get('row-3000')).toBeUndefined();
    expect(loaded.rows.has('row-12345')).toBe(false);
    expect([...loaded.rows.keys()].slice(0, 3)).toEqual(['row-0', 'row-1', 'row-2']);
  });

  it('refuses a body whose line changed under the run', async () => {
    const file = join(dir, 'people.jsonl');
    createdRows(file, 10);
    const loaded = await loadJournal(file);
    // Another journal of the same length put in its place: the line at the offset is another row's.
    const lines: string[] = [];
    for (let i = 0; i < 10; i++) {
      lines.push(
        journalLine({
          t: 'intent',
          k: `row-${9 - i}`,
          op: 'create',
          run: 'run-1',
          at,
          fp: `fp-${String(9 - i).padStart(19, '0')}`,
          body: body(9 - i),
        }),
      );
      lines.push(
        journalLine({
          t: 'done',
          k: `row-${9 - i}`,
          op: 'create',
          run: 'run-1',
          at,
          id: 1_000_009 - i,
          fp: `fp-${String(9 - i).padStart(19, '0')}`,
        }),
      );
    }
    writeFileSync(file, lines.join(''));
    expect(() => loaded.rows.get('row-0')?.body).toThrow(FerryError);
  });

  it("keeps no body of the run's own writes in memory: it finds them on the lines the writer queued", async () => {
    const file = join(dir, 'people.jsonl');
    createdRows(file, 5);
    const loaded = await loadJournal(file);
    const writer = await JournalWriter.open(file, {
      seal: loaded.seal,
      onBody: (key, offset, length, written) => loaded.rows.wrote(key, offset, length, written),
    });
    for (let i = 5; i < 3000; i++) {
      const entry: JournalEntry = {
        t: 'intent',
        k: `row-${i}`,
        op: 'create',
        run: 'run-2',
        at,
        fp: 'f',
        body: body(i),
      };
      await writer.append(entry);
      writer.enqueue({ t: 'done', k: `row-${i}`, op: 'create', run: 'run-2', at, id: i, fp: 'f' });
      // As the importer folds a confirmed create into its rows.
      const row = blankRow(`row-${i}`);
      loaded.rows.set(row.key, row);
      Object.assign(row, {
        id: i,
        fp: 'f',
        body: body(i),
        origin: 'created',
        pending: null,
        rejected: null,
        run: 'run-2',
      });
    }
    // A body changed after its line was written is kept (the next run reads the line's).
    Object.assign(loaded.rows.get('row-7') as object, { body: { changed: true } });
    await writer.close();
    expect(loaded.rows.heldBodies).toBe(1);
    expect(loaded.rows.get('row-10')?.body).toEqual(body(10));
    expect(loaded.rows.get('row-2999')?.body).toEqual(body(2999));
    expect(loaded.rows.get('row-7')?.body).toEqual({ changed: true });
    const again = await loadJournal(file);
    expect(again.rows.size).toBe(3000);
    expect(again.rows.get('row-2999')?.body).toEqual(body(2999));
  });
});
