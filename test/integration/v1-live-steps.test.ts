import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { runCli } from '../helpers/fake-io.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
let box: TestSandbox;
let work: string;

beforeAll(async () => {
  box = await startTestSandbox();
  work = mkdtempSync(join(tmpdir(), 'ferry-v1-live-steps-'));
});

afterAll(async () => {
  await box.close();
  rmSync(work, { recursive: true, force: true });
});

describe('the bundled v1 plan given the live account with its history step kept', () => {
  it('is refused before the set-up or any step writes, naming the step, its line and what to do', async () => {
    // Every input swapped for its list as docs/sources.md says, but the `history` step (history.xml,
    // a list v1 has no live equivalent of) left in: the mistake a consultant is most likely to make.
    const plan = parseYaml(readFileSync(join(ROOT, 'mappings/plans/v1-migration.yaml'), 'utf8')) as {
      steps: Array<{ name: string; mapping: string; input: string }>;
    };
    const lists: Record<string, string> = {
      kases: '/api/kase',
      'kase-notes': '/api/kase',
      opportunities: '/api/opportunity',
      'opportunity-notes': '/api/opportunity',
    };
    for (const step of plan.steps) {
      step.input = `v1+${box.url}${lists[step.name] ?? ''}`;
      step.mapping = join(ROOT, 'mappings', step.mapping.replace('../', ''));
    }
    writeFileSync(join(work, 'v1-live.yaml'), stringifyYaml(plan));
    const line =
      readFileSync(join(work, 'v1-live.yaml'), 'utf8')
        .split('\n')
        .findIndex((text) => /name: history$/.test(text)) + 1;
    const before = { parties: box.store.parties.all().length, activityTypes: box.store.activityTypes.all().length };
    const env = { CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token };
    const run = await runCli(['run', 'v1-live.yaml', '--state-dir', join(work, 'state')], { cwd: work, env });
    expect(run.code, run.stdout + run.stderr).toBe(2);
    expect(run.stderr).toContain(
      `error [PLAN_INVALID] at ${join(work, 'v1-live.yaml')}, line ${line}, steps[7]: step history reads the live account v1+${box.url}`,
    );
    expect(run.stderr).toMatch(/the v1 interface has no list of all history/);
    expect(run.stderr).toMatch(
      /Leave this step out when reading a live account: .*v1-kase-notes\.yaml from v1\+http:\/\/127\.0\.0\.1:\d+\/api\/kase/,
    );
    // Nothing written: no set-up (the plan's activity types), no record, no state folder.
    expect({ parties: box.store.parties.all().length, activityTypes: box.store.activityTypes.all().length }).toEqual(
      before,
    );
    expect(existsSync(join(work, 'state'))).toBe(false);
    // validate says the same, rather than that it cannot read a live account.
    const validate = await runCli(['validate', '--plan', 'v1-live.yaml'], { cwd: work, env });
    expect(validate.code).toBe(2);
    expect(validate.stderr).toMatch(/step history reads the live account/);
  });
});

describe('a dry run of the live plan as the README walks it', () => {
  it('shows each input as its address, counts the reads of the old account, and prints no Node warning', async () => {
    const old = await startTestSandbox();
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      const seeded = await runCli(
        ['run', join(ROOT, 'mappings/plans/v1-migration.yaml'), '--state-dir', join(work, 'seed-state')],
        { cwd: work, env: { CRM_FERRY_BASE_URL: old.url, CRM_FERRY_TOKEN: old.token } },
      );
      expect(seeded.code, seeded.stdout + seeded.stderr).toBe(0);
      // In the old account the users had their old names, which the bundled mappings translate.
      for (const user of old.store.users.all()) {
        if (user.username === 'sam') user.username = 'jsmith';
        if (user.username === 'kim') user.username = 'ajones';
      }
      const plan = parseYaml(readFileSync(join(ROOT, 'mappings/plans/v1-migration.yaml'), 'utf8')) as {
        steps: Array<{ name: string; mapping: string; input: string }>;
      };
      const lists: Record<string, string> = {
        kases: '/api/kase',
        'kase-notes': '/api/kase',
        opportunities: '/api/opportunity',
        'opportunity-notes': '/api/opportunity',
      };
      plan.steps = plan.steps.filter((step) => step.name !== 'history');
      for (const step of plan.steps) {
        step.input = `v1+${old.url}${lists[step.name] ?? ''}`;
        step.mapping = join(ROOT, 'mappings', step.mapping.replace('../', ''));
      }
      writeFileSync(join(work, 'v1-live-dry.yaml'), stringifyYaml(plan));
      const env = { CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token, CRM_FERRY_V1_TOKEN: old.token };
      const dry = await runCli(['run', 'v1-live-dry.yaml', '--dry-run'], { cwd: work, env });
      expect(dry.code, dry.stdout + dry.stderr).toBe(0);
      expect(dry.stdout).toContain(`Step kases: v1+${old.url}/api/kase with `);
      const reads = /Reading the old account \(v1\) took (\d+) requests besides/.exec(dry.stdout);
      expect(reads, dry.stdout).not.toBeNull();
      // At least the first page of each of the eight steps' lists, and more for the records' custom fields, tags and history.
      expect(Number(reads?.[1])).toBeGreaterThan(8);
      // Eight steps read at once, each with a request under way beside the writes: no listener warning.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await old.close();
    }
  });
});
