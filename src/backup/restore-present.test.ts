import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CrmClient } from '../client/index.ts';
import { journalLine, type JournalEntry } from '../journal/index.ts';
import { presentOnMatched } from './restore-present.ts';
import { taskKey } from './restore-inputs.ts';

let dir: string | null = null;
afterEach(async () => {
  if (dir !== null) await rm(dir, { recursive: true, force: true });
  dir = null;
});

async function journal(
  state: string,
  step: string,
  rows: Array<{ key: string; id: number; origin: 'created' | 'matched' }>,
): Promise<void> {
  await mkdir(join(state, 'journal'), { recursive: true });
  const lines = rows.map(({ key, id, origin }) =>
    journalLine({
      t: 'done',
      k: key,
      op: origin === 'matched' ? 'match' : 'create',
      run: 'r1',
      at: '2026-11-25T00:00:00Z',
      id,
      fp: 'x',
      origin,
    } as JournalEntry),
  );
  await writeFile(join(state, 'journal', `${step}.jsonl`), lines.map((l) => `${l}\n`).join(''));
}

async function* each<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

describe('presentOnMatched: what a matched record already holds', () => {
  it('counts a task the account had even when a note the restore wrote has the same id (entries and tasks are numbered apart)', async () => {
    dir = await mkdtemp(join(tmpdir(), 'restore-present-'));
    await journal(dir, 'organisations', [{ key: '1', id: 100, origin: 'matched' }]);
    await journal(dir, 'entries', [{ key: '50', id: 7, origin: 'created' }]);
    await journal(dir, 'tasks', []);
    const client = {
      transport: { requestsSent: 0 },
      // The account's lists, as the client's one paginator gives them.
      paginate: (path: string) =>
        each(
          path === '/entries'
            ? [{ id: 7, type: 'note', content: 'ours', entryAt: '2026-01-01T00:00:00Z', party: { id: 100 } }]
            : path === '/tasks'
              ? [{ id: 7, description: 'Call back', dueOn: '2026-12-01', party: { id: 100 } }]
              : [],
        ),
      entriesOf: () => each([]),
    } as unknown as CrmClient;
    const { present, matched } = await presentOnMatched(dir, client);
    expect(matched).toBe(1);
    // The restore's own note is not "already there"; the account's own task is.
    expect(present.entries.size).toBe(0);
    expect(present.tasks.get(taskKey('parties:100', 'Call back', '2026-12-01'))).toBe(1);
  });
});
