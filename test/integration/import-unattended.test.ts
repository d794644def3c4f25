import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CrmClient } from '../../src/client/index.ts';
import { runImport } from '../../src/load/index.ts';
import { checkChaos } from '../helpers/chaos-check.ts';
import { SMALL, writeChaosPlan } from '../helpers/chaos-plan.ts';
import { startTestSandbox } from '../helpers/sandbox.ts';
import { runUnattended } from '../helpers/unattended.ts';

const work = mkdtempSync(join(tmpdir(), 'ferry-unattended-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('an unattended run: one invocation to the end through faults, token expiry and restarts', () => {
  it('settles the creates whose answers were lost inside the run, and goes on', async () => {
    const box = await startTestSandbox({
      faults: { errorRate: 0.1, dropAfterWriteRate: 0.1, latencyMs: 0, latencyJitterMs: 2 },
      seed: 8,
    });
    const client = new CrmClient({
      baseUrl: box.url,
      auth: box.token,
      retry: { limit: 8, baseDelayMs: 5, maxDelayMs: 50 },
    });
    try {
      const plan = writeChaosPlan(join(work, 'in-process'), SMALL, 4);
      const summary = await runImport(
        { source: { kind: 'plan', planFile: plan.plan }, stateDir: join(work, 'in-process', 'state'), concurrency: 8 },
        { client, account: { baseUrl: box.url, account: box.url } },
      );
      expect(summary.stopped).toBeNull();
      // Dropped answers of applied creates were found; 5xx answers of creates not applied were sent again.
      expect(summary.reconciled.applied).toBeGreaterThan(0);
      expect(summary.reconciled.notApplied).toBeGreaterThan(0);
      expect(summary.steps.reduce((sum, s) => sum + s.rejected, 0)).toBe(0);
      const figures = await checkChaos(box, plan);
      expect(figures.problems).toEqual([]);
      expect(figures.rows).toBe(Object.values(SMALL).reduce((a, b) => a + b, 0));
    } finally {
      await client.close();
      await box.close();
    }
  }, 120_000);

  it(
    'writes every row once, with 10% 5xx, 5% dropped answers, 3-second tokens and the service killed twice',
    async () => {
      // The suite's size; `npm run bench -- import-unattended` runs 5,000 rows.
      const scale = Number(process.env.UNATTENDED_SCALE ?? 3);
      const sizes = Object.fromEntries(
        Object.entries(SMALL).map(([step, n]) => [step, Math.round(n * scale)]),
      ) as unknown as typeof SMALL;
      const result = await runUnattended({
        dir: work,
        sizes,
        killAt: [0.3, 0.6],
        downMs: 1500,
        faults: { errorRate: 0.1, dropAfterWriteRate: 0.05, latencyMs: 2, latencyJitterMs: 4 },
        tokenTtlSeconds: 3,
        concurrency: 8,
        seed: 21,
      });
      const message = `exit ${result.code}\n${result.stderr}\n${result.tail.join('\n')}`;
      console.log(
        `unattended: exit ${result.code}, ${result.figures.rows} rows in ${(result.elapsedMs / 1000).toFixed(1)} s, ${result.kills} kills, ${result.requests} requests, ` +
          `lost answers found applied ${result.reconciled?.applied}, not applied ${result.reconciled?.notApplied}, ${result.rejected} rejected`,
      );
      expect([0, 3], message).toContain(result.code);
      expect(result.kills).toBe(2);
      expect(result.refreshed).toBe(true);
      expect(result.figures.problems).toEqual([]);
      expect(result.figures.rows).toBe(Object.values(sizes).reduce((a, b) => a + b, 0));
      // Answers were lost and settled in the run, not left to a second one.
      expect((result.reconciled?.applied ?? 0) + (result.reconciled?.notApplied ?? 0)).toBeGreaterThan(0);
      expect(result.rejected).toBe(0);
    },
    Number(process.env.UNATTENDED_TIMEOUT_MS ?? 180_000),
  );
});
