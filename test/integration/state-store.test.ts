import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect } from 'vitest';
import { StoreState } from '../../src/journal/index.ts';
import { pullFile } from '../../src/journal/store-sync.ts';
import { seededRandom } from '../../src/util/seeded-random.ts';
import { checkChaos } from '../helpers/chaos-check.ts';
import { SMALL, writeChaosPlan } from '../helpers/chaos-plan.ts';
import { runImportChild } from '../helpers/import-child-run.ts';
import { postgresTests } from '../helpers/postgres-tests.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

/**
 * A run's state kept in PostgreSQL: a plan killed with SIGKILL in one folder goes on from another
 * folder (as on another machine) with the same store and key, every row once; the store refuses a
 * second writer of a journal; a folder's state moves into the store.
 */
const work = mkdtempSync(join(tmpdir(), 'ferry-store-'));
const { withPostgres } = postgresTests();
let box: TestSandbox | undefined;

afterAll(async () => {
  await box?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('a state kept in PostgreSQL', () => {
  withPostgres(
    'a plan killed with SIGKILL in one folder is finished from others with the same store: every row once',
    async (url) => {
      box = await startTestSandbox({
        faults: { errorRate: 0.03, dropAfterWriteRate: 0.03, latencyMs: 5, latencyJitterMs: 10 },
        seed: 7,
      });
      const plan = writeChaosPlan(join(work, 'plan'), SMALL, 13);
      const random = seededRandom(9);
      const store = [url, 'chaos plan @ sandbox'];
      let killed = 0;
      // Each run in a folder of its own, as a new pod or runner would start with an empty one.
      for (let i = 0; i < 4; i += 1) {
        const folder = join(work, `machine-${i}`);
        const result = await runImportChild(
          [plan.plan, folder, box.url, box.token, '4', ...store],
          150 + Math.floor(random() * 400),
        );
        if (result.killed) killed += 1;
        else expect(result.code, result.out).toBe(0);
      }
      const last = await runImportChild(
        [plan.plan, join(work, 'machine-last'), box.url, box.token, '4', ...store],
        null,
      );
      expect(last.code, last.out).toBe(0);
      const figures = await checkChaos(box, plan);
      expect(figures.problems).toEqual([]);
      expect(figures.rows).toBe(Object.values(plan.sizes).reduce((a, b) => a + b, 0));
      expect(killed).toBeGreaterThan(0);
      // The last folder holds the whole journal, taken from the store, and the run's results.
      const results = readdirSync(join(work, 'machine-last', 'results'));
      expect(results.some((name) => name.endsWith('.success.csv'))).toBe(true);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const journals = await client.query<{ journal: string }>(
          "SELECT DISTINCT journal FROM crm_ferry.journal_groups WHERE state_key = 'chaos plan @ sandbox' ORDER BY journal",
        );
        expect(journals.rows.map((row) => row.journal)).toEqual(
          Object.keys(plan.sizes)
            .map((step) => `${step}.jsonl`)
            .sort(),
        );
      } finally {
        await client.end();
      }
      // A run again from yet another folder finds every row written: it sends no write.
      const again = await runImportChild(
        [plan.plan, join(work, 'machine-again'), box.url, box.token, '4', ...store],
        null,
      );
      expect(again.code, again.out).toBe(0);
      const after = await checkChaos(box, plan);
      expect(after.problems).toEqual([]);
    },
    240_000,
  );

  withPostgres('refuses a second writer of a journal, and one whose lock was taken', async (url) => {
    const one = await StoreState.open({ url, key: 'fence @ test' });
    try {
      const group = Buffer.from('{"t":"cancel","k":"a"}\t00000000\n');
      const start = { lines: 0, bytes: 0, crc: '00000000' };
      const end = { lines: 1, bytes: group.length, crc: '12345678' };
      await one.appendGroup('people.jsonl', group, start, end);
      // Appending again where the journal began: another process's lines are there now.
      await expect(one.appendGroup('people.jsonl', group, start, end)).rejects.toMatchObject({
        code: 'JOURNAL_STORE',
        message: expect.stringContaining('no longer ends where this run left it'),
      });
      // The state's run lock is held: a second process is refused at once.
      await expect(StoreState.open({ url, key: 'fence @ test' })).rejects.toMatchObject({ code: 'JOURNAL_LOCKED' });
      const read: Buffer[] = [];
      for await (const g of one.groupsAfter('people.jsonl', 0)) read.push(g);
      expect(Buffer.concat(read).toString()).toBe(group.toString());
    } finally {
      await one.close();
    }
    // Given back: the next process takes it.
    await (await StoreState.open({ url, key: 'fence @ test' })).close();
  });

  withPostgres('keeps a large result file in parts, and gives it back byte for byte', async (url) => {
    const folder = join(work, 'parts');
    mkdirSync(folder, { recursive: true });
    const big = Buffer.alloc(9 * (1 << 20) + 123);
    for (let i = 0; i < big.length; i += 1) big[i] = (i * 7919) % 251;
    writeFileSync(join(folder, 'big.csv'), big);
    writeFileSync(join(folder, 'empty.csv'), '');
    const state = await StoreState.open({ url, key: 'parts @ test' });
    try {
      await state.putFolder(
        'results/',
        new Map([
          ['results/big.csv', join(folder, 'big.csv')],
          ['results/empty.csv', join(folder, 'empty.csv')],
        ]),
      );
      expect(await state.fileNames()).toEqual(['results/big.csv', 'results/empty.csv']);
      await pullFile(join(folder, 'back.csv'), state.fileParts('results/big.csv'));
      expect(readFileSync(join(folder, 'back.csv')).equals(big)).toBe(true);
      expect(await state.readFile('results/empty.csv')).toEqual(Buffer.alloc(0));
      expect(await state.readFile('results/none.csv')).toBeNull();
    } finally {
      await state.close();
    }
  });

  withPostgres('keeps no token or secret: the store holds what the state folder holds', async (url) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const files = await client.query<{ content: Buffer }>('SELECT content FROM crm_ferry.state_files');
      const groups = await client.query<{ content: Buffer }>('SELECT content FROM crm_ferry.journal_groups');
      const token = box?.token ?? 'no-sandbox-ran';
      for (const row of [...files.rows, ...groups.rows]) expect(row.content.toString('utf8')).not.toContain(token);
    } finally {
      await client.end();
    }
  });
});
