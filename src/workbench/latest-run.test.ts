import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type JournalEntry, journalLine } from '../journal/index.ts';
import { fieldForPage, latestRun } from './latest-run.ts';

const root = mkdtempSync(join(tmpdir(), 'ferry-latest-run-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const FIRST = '20261129T040000000Z-100-1';
const SECOND = '20261129T050000000Z-200-1';

/** A state folder whose journals hold `entries` by step, and the runs a rollback undid. */
function state(name: string, journals: Record<string, JournalEntry[]>, undone: string[] = []): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'journal'), { recursive: true });
  mkdirSync(join(dir, 'results'), { recursive: true });
  for (const [step, entries] of Object.entries(journals))
    writeFileSync(join(dir, 'journal', `${step}.jsonl`), entries.map(journalLine).join(''));
  if (undone.length > 0) writeFileSync(join(dir, 'rollbacks.json'), JSON.stringify({ undone }));
  return dir;
}

const start = (run: string, at: string): JournalEntry => ({ t: 'run', run, at, event: 'start' });
const end = (run: string, at: string, event: 'end' | 'interrupted' = 'end'): JournalEntry => ({
  t: 'run',
  run,
  at,
  event,
});
const created = (run: string, k: string, id: number): JournalEntry => ({
  t: 'done',
  k,
  op: 'create',
  run,
  at: '2026-11-29T05:00:01.000Z',
  id,
  fp: 'x',
});
const rejected = (run: string, k: string): JournalEntry => ({
  t: 'reject',
  k,
  run,
  at: '2026-11-29T05:00:01.000Z',
  code: 'MAPPING_VALUE',
  message: 'bad',
});

describe('latestRun: the latest run of a state folder, whoever started it', () => {
  const shown = (path: string): string => path.slice(root.length + 1);

  it('says there is none in a folder no run wrote to', async () => {
    expect((await latestRun(join(root, 'nowhere'), new Set(), shown)).state).toBe('none');
  });

  it('takes the latest run across the steps, with its counts and rejected rows, and the rejects file with reasons', async () => {
    const dir = state('ended', {
      people: [
        start(FIRST, '2026-11-29T04:00:00.000Z'),
        created(FIRST, 'a', 1),
        end(FIRST, '2026-11-29T04:00:02.000Z'),
        start(SECOND, '2026-11-29T05:00:00.000Z'),
        created(SECOND, 'b', 2),
        rejected(SECOND, 'c'),
        end(SECOND, '2026-11-29T05:00:02.000Z'),
      ],
      companies: [
        start(FIRST, '2026-11-29T04:00:00.000Z'),
        created(FIRST, 'x', 3),
        end(FIRST, '2026-11-29T04:00:01.000Z'),
      ],
    });
    writeFileSync(
      join(dir, 'results', 'people.rejects.csv'),
      '\uFEFFid,email,_row,_field,_code,_message,_rule,_raw\r\nc,bad@@x,4,fields[2],MAPPING_VALUE,"email ""bad@@x"" is not an e-mail address",fields[2].value.transform[0],\r\n',
    );
    const latest = await latestRun(dir, new Set([SECOND]), shown);
    expect(latest).toMatchObject({
      id: SECOND,
      state: 'finished',
      fromPage: true,
      startedAt: '2026-11-29T05:00:00.000Z',
      endedAt: '2026-11-29T05:00:02.000Z',
    });
    expect(latest.steps).toEqual([
      {
        step: 'people',
        created: 1,
        updated: 0,
        rejected: 1,
        rejects: [{ row: 4, field: '', reason: 'email "bad@@x" is not an e-mail address' }],
        rejectsFile: 'ended/results/people.rejects.csv',
      },
    ]);
    expect((await latestRun(dir, new Set(), shown)).fromPage).toBe(false);
  });

  it('says a run that did not end, one stopped before its end, and one undone', async () => {
    expect(
      (
        await latestRun(
          state('going', { people: [start(SECOND, '2026-11-29T05:00:00.000Z'), created(SECOND, 'a', 1)] }),
          new Set(),
          shown,
        )
      ).state,
    ).toBe('going');
    expect(
      (
        await latestRun(
          state('stopped', {
            people: [start(SECOND, '2026-11-29T05:00:00.000Z'), end(SECOND, '2026-11-29T05:00:01.000Z', 'interrupted')],
          }),
          new Set(),
          shown,
        )
      ).state,
    ).toBe('interrupted');
    const undone = await latestRun(
      state(
        'undone',
        {
          people: [
            start(SECOND, '2026-11-29T05:00:00.000Z'),
            rejected(SECOND, 'a'),
            end(SECOND, '2026-11-29T05:00:01.000Z'),
          ],
        },
        [SECOND],
      ),
      new Set(),
      shown,
    );
    expect(undone.state).toBe('undone');
    expect(undone.steps[0]?.rejects).toEqual([]);
  });

  it("shows a target, not a rule's place in the mapping", () => {
    expect(fieldForPage('lastName')).toBe('lastName');
    expect(fieldForPage('fields[3]')).toBe('');
    expect(fieldForPage('key')).toBe('');
  });
});
