import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { openSource } from '../../src/sources/index.ts';
import { seededRandom } from '../../src/util/seeded-random.ts';
import { runCli } from '../helpers/fake-io.ts';
import { startTestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const work = mkdtempSync(join(tmpdir(), 'ferry-validate-run-'));

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The ready-made plans, each over the samples it names. */
const PLANS = readdirSync(join(ROOT, 'mappings/plans'))
  .filter((name) => name.endsWith('.yaml'))
  .map((name) => name.replace(/\.yaml$/, ''))
  .sort();

/** Cells a customer's file gets wrong: an empty value, a stray word, a value from another column. */
const DIRT = ['', '??', 'n/a', 'Groothandel', '31/02/2024', 'not-an-address', '0'];

/**
 * A copy of the mappings and samples in which every CSV input has some cells spoiled, chosen by a
 * seeded random (the same rows on every machine): whatever validate makes of a row, the run must
 * make of it too.
 */
function dirtyCopy(seed: number): string {
  const dir = mkdtempSync(join(work, `seed-${seed}-`));
  cpSync(join(ROOT, 'mappings'), join(dir, 'mappings'), { recursive: true });
  cpSync(join(ROOT, 'samples'), join(dir, 'samples'), { recursive: true });
  const random = seededRandom(seed);
  const spoil = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) spoil(path);
      else if (entry.name.endsWith('.csv')) {
        let header: string[];
        let rows: string[][];
        try {
          [header = [], ...rows] = parse(readFileSync(path, 'utf8'), {
            bom: true,
            relax_column_count: true,
          }) as string[][];
        } catch {
          // Not a comma-separated UTF-8 file (the locale samples): no plan reads it.
          continue;
        }
        for (const row of rows) {
          if (random() > 0.6) continue;
          for (let n = 0; n < 3; n += 1)
            row[Math.floor(random() * row.length)] = DIRT[Math.floor(random() * DIRT.length)] as string;
        }
        writeFileSync(path, stringify([header, ...rows]));
      }
    }
  };
  spoil(join(dir, 'samples'));
  return dir;
}

async function lines(file: string, kind: 'rejects' | 'warnings'): Promise<string[]> {
  if (!existsSync(file)) return [];
  const opened = await openSource(file, {});
  const out: string[] = [];
  for await (const item of opened.items) {
    if (item.kind !== 'row') continue;
    const v = item.values;
    if (kind === 'rejects') out.push(`${v._row} ${v._code} ${v._field}: ${v._message}`);
    else if (v._row !== undefined) out.push(`${v._row} ${v._code} ${v._field}`);
    else
      for (const part of String(v.warnings ?? '').split(' | '))
        if (part !== '') out.push(`${v._row} ${/^(\S+) ([^:]+):/.exec(part)?.slice(1).join(' ')}`);
  }
  return out.sort();
}

/** The warnings of a run's success file, as `row CODE field`. */
async function runWarnings(file: string): Promise<string[]> {
  if (!existsSync(file)) return [];
  const opened = await openSource(file, {});
  const out: string[] = [];
  for await (const item of opened.items) {
    if (item.kind !== 'row') continue;
    for (const part of String(item.values.warnings ?? '').split(' | ')) {
      const match = /^(\S+) ([^:]+):/.exec(part);
      if (match) out.push(`${item.values._row} ${match[1]} ${match[2]}`);
    }
  }
  return out.sort();
}

describe('validate --online = run: every ready-made plan over its samples, clean and spoilt', () => {
  const cases = [...PLANS.map((plan) => ({ plan, seed: 0 })), ...PLANS.map((plan) => ({ plan, seed: 7 }))];

  it.each(cases)('$plan (spoilt with seed $seed; 0: as shipped)', async ({ plan, seed }) => {
    const root = seed === 0 ? ROOT : dirtyCopy(seed);
    const planFile = join(root, 'mappings/plans', `${plan}.yaml`);
    const out = mkdtempSync(join(work, `${plan}-${seed}-`));
    const box = await startTestSandbox();
    try {
      const env = { CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token };
      const checked = await runCli(
        ['validate', '--plan', planFile, '--online', '--rejects-dir', join(out, 'checked')],
        { cwd: out, env },
      );
      expect([0, 3], checked.stderr).toContain(checked.code);
      const run = await runCli(['run', planFile, '--state-dir', join(out, 'state')], { cwd: out, env });
      expect([0, 3], run.stdout + run.stderr).toContain(run.code);
      expect(run.code, 'validate said every row is valid exactly when the run rejected none').toBe(checked.code);
      const steps = readdirSync(join(out, 'state', 'results'))
        .filter((name) => name.endsWith('.success.csv') || name.endsWith('.rejects.csv'))
        .map((name) => name.replace(/\.(success|rejects)\.csv$/, ''));
      let said = 0;
      for (const step of new Set(steps)) {
        said += (await lines(join(out, 'state', 'results', `${step}.rejects.csv`), 'rejects')).length;
        said += (await runWarnings(join(out, 'state', 'results', `${step}.success.csv`))).length;
        expect(
          await lines(join(out, 'state', 'results', `${step}.rejects.csv`), 'rejects'),
          `${plan}: ${step}: rejects`,
        ).toEqual(await lines(join(out, 'checked', `${step}.rejects.csv`), 'rejects'));
        expect(
          await runWarnings(join(out, 'state', 'results', `${step}.success.csv`)),
          `${plan}: ${step}: warnings`,
        ).toEqual(await lines(join(out, 'checked', `${step}.warnings.csv`), 'warnings'));
      }
      // The spoilt files give validate and the run something to agree on (the legacy plan reads XML, which is not spoilt).
      if (seed !== 0 && plan !== 'v1-migration') expect(said).toBeGreaterThan(0);
    } finally {
      await box.close();
    }
  });
});
