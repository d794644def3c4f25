import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/fake-io.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ferry-matrix-'));
  cpSync('/tmp/vx/styles', dir, { recursive: true });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(['plan-plain.yaml', 'plan-fallback.yaml'])('%s', (plan) => {
  it('run then verify', async () => {
    const box: TestSandbox = await startTestSandbox();
    try {
      const env = { CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token };
      const s = `state-${plan}`;
      const run = await runCli(['run', plan, '--state-dir', s], { cwd: dir, env });
      console.log(plan, 'RUN', run.code, run.stdout.slice(-2500), run.stderr.slice(-1500));
      const v = await runCli(['verify', plan, '--state-dir', s, '--differences', `d-${plan}.csv`], { cwd: dir, env });
      console.log(plan, 'VERIFY', v.code, v.stdout.slice(-3000), v.stderr.slice(-1500));
      console.log(readFileSync(join(dir, `d-${plan}.csv`), 'utf8').slice(0, 3000));
      expect(v.code).toBe(0);
    } finally {
      await box.close();
    }
  }, 120_000);
});
