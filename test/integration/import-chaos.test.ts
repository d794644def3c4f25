import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/util/seeded-random.ts';
import { checkChaos } from '../helpers/chaos-check.ts';
import { runImportChild } from '../helpers/import-child-run.ts';
import { SMALL, writeChaosPlan } from '../helpers/chaos-plan.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const work = mkdtempSync(join(tmpdir(), 'ferry-chaos-'));
let box: TestSandbox | undefined;
afterAll(async () => {
  await box?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('chaos: the importer killed at random moments, against a faulty service', () => {
  it(
    'every source row ends in the account exactly once, with its fields and links',
    async () => {
      const kills = Number(process.env.CHAOS_KILLS ?? 8);
      box = await startTestSandbox({
        faults: { errorRate: 0.05, dropAfterWriteRate: 0.03, latencyMs: 5, latencyJitterMs: 10 },
        seed: 3,
      });
      const scale = Number(process.env.CHAOS_SCALE ?? 1);
      const sizes = Object.fromEntries(
        Object.entries(SMALL).map(([step, n]) => [step, n * scale]),
      ) as unknown as typeof SMALL;
      const plan = writeChaosPlan(join(work, 'plan'), sizes, 11);
      const stateDir = join(work, 'state');
      const args = [plan.plan, stateDir, box.url, box.token];
      const random = seededRandom(5);
      let killed = 0;
      for (let i = 0; i < kills; i += 1) {
        const result = await runImportChild(args, Math.floor(random() * 300));
        if (result.killed) killed += 1;
        else if (result.code === 0) break;
      }
      let last = await runImportChild(args, null);
      for (let i = 0; i < 3 && last.code !== 0; i += 1) last = await runImportChild(args, null);
      expect(last.code, last.out).toBe(0);
      const figures = await checkChaos(box, plan);
      const leftovers = readdirSync(join(stateDir, 'results')).filter((f) => f.endsWith('.tmp'));
      console.log(
        `chaos: ${killed} kills, ${figures.rows} rows, ${figures.missing} missing, ${figures.duplicated} duplicated, ${figures.differing} differing`,
      );
      expect(figures.problems).toEqual([]);
      expect(figures.rows).toBe(Object.values(plan.sizes).reduce((a, b) => a + b, 0));
      expect(killed).toBeGreaterThan(0);
      expect(leftovers).toEqual([]);
    },
    Number(process.env.CHAOS_TIMEOUT_MS ?? 240_000),
  );
});
