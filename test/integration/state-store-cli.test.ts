import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { writeContactsPlan } from '../helpers/contacts-plan.ts';
import { StoreState } from '../../src/journal/index.ts';
import { runCli } from '../helpers/fake-io.ts';
import { postgresTests } from '../helpers/postgres-tests.ts';
import { allPages, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

/**
 * The commands with --state-store, each from a folder of its own as on machines that come and go:
 * run, run again, verify and rollback find the state by the plan's name and the account; a state
 * kept in a folder moves into the store; export --since auto keeps its time there.
 */
const work = mkdtempSync(join(tmpdir(), 'ferry-store-cli-'));
const { withPostgres } = postgresTests();
let box: TestSandbox;

beforeAll(async () => {
  box = await startTestSandbox();
});

afterAll(async () => {
  await box?.close();
  rmSync(work, { recursive: true, force: true });
});

/** A machine: a folder of its own holding the plan, its mappings and its input, and nothing else. */
function machine(name: string, plan = 'plan.yaml'): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeContactsPlan(dir, plan);
  return dir;
}

async function parties(): Promise<number> {
  return (await allPages(box, '/parties', 'parties')).length;
}

describe('commands with --state-store', () => {
  withPostgres(
    'run, run again, verify and rollback from four folders find one state by the plan and account',
    async (url) => {
      const env = { CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token, CRM_FERRY_STATE_STORE: url };
      const before = await parties();
      const first = await runCli(['run', 'plan.yaml'], { cwd: machine('one'), env });
      expect(first.code, first.stderr).toBe(0);
      const made = (await parties()) - before;
      expect(made).toBeGreaterThan(0);

      // Another machine, an empty folder: every row is known, nothing is written again.
      const again = await runCli(['run', 'plan.yaml'], { cwd: machine('two'), env });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toMatch(/created\s+0/);
      expect(await parties()).toBe(before + made);
      expect(readdirSync(join(work, 'two', '.crm-ferry', 'journal')).sort()).toEqual([
        'organisations.jsonl',
        'people.jsonl',
      ]);

      const checked = await runCli(['verify', 'plan.yaml'], { cwd: machine('three'), env });
      expect(checked.code, checked.stdout + checked.stderr).toBe(0);
      expect(checked.stdout).toMatch(/missing\s+0/i);

      const undone = await runCli(['rollback', 'plan.yaml'], { cwd: machine('four'), env });
      expect(undone.code, undone.stderr).toBe(0);
      expect(await parties()).toBe(before);

      // Without the store, the same plan in a fresh folder has no state: rollback says so.
      const alone = await runCli(['rollback', 'plan.yaml'], {
        cwd: machine('five'),
        env: { CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token },
      });
      expect(alone.code).toBe(2);
      expect(alone.stderr).toMatch(/there is no import state in/);
    },
  );

  withPostgres('a state kept in a folder moves into the store, and goes on from another folder', async (url) => {
    const env = { CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token };
    const folder = machine('kept-alone', 'moved.yaml');
    const before = await parties();
    const first = await runCli(['run', 'moved.yaml', '--limit', '3'], { cwd: folder, env });
    expect(first.code, first.stderr).toBe(0);
    const made = (await parties()) - before;
    // The same folder with the store: its state goes into the store, and the run goes on.
    const moved = await runCli(['run', 'moved.yaml', '--limit', '3', '--state-store', url], { cwd: folder, env });
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toMatch(/created\s+0/);
    const state = JSON.parse(readFileSync(join(folder, '.crm-ferry', 'state.json'), 'utf8'));
    expect(state.store.key).toMatch(/^moved @ /);
    // From another folder, with the store: the rows are known.
    const elsewhere = await runCli(['run', 'moved.yaml', '--limit', '3', '--state-store', url], {
      cwd: machine('elsewhere', 'moved.yaml'),
      env,
    });
    expect(elsewhere.code, elsewhere.stderr).toBe(0);
    expect(elsewhere.stdout).toMatch(/created\s+0/);
    expect(await parties()).toBe(before + made);
  });

  withPostgres('a folder holding another state is set aside, never mixed in', async (url) => {
    const env = { CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token, CRM_FERRY_STATE_STORE: url };
    const folder = machine('shared-folder');
    const one = await runCli(['run', 'plan.yaml', '--limit', '2', '--state-key', 'first'], { cwd: folder, env });
    expect(one.code, one.stderr).toBe(0);
    const two = await runCli(['run', 'plan.yaml', '--limit', '2', '--state-key', 'second'], { cwd: folder, env });
    expect(two.code, two.stderr).toBe(0);
    // The second key has its own state: the rows were written for it (another state, another set of records).
    expect(two.stdout).toMatch(/created\s+[1-9]/);
    expect(readdirSync(join(folder, '.crm-ferry')).some((name) => name.startsWith('previous-'))).toBe(true);
    // Back to the first key: the folder follows the store again, nothing is created twice.
    const back = await runCli(['run', 'plan.yaml', '--limit', '2', '--state-key', 'first'], { cwd: folder, env });
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toMatch(/created\s+0/);
  });

  withPostgres(
    'a run of a state another process holds is refused at once, and its folder left as it was',
    async (url) => {
      const env = { CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token, CRM_FERRY_STATE_STORE: url };
      const folder = machine('held');
      const first = await runCli(['run', 'plan.yaml', '--limit', '1', '--state-key', 'held'], { cwd: folder, env });
      expect(first.code, first.stderr).toBe(0);
      const before = readdirSync(join(folder, '.crm-ferry')).sort();
      // Another process, on whatever machine, runs the state.
      const other = await StoreState.open({ url, key: 'held' });
      try {
        const refused = await runCli(['run', 'plan.yaml', '--fresh', '--yes', '--state-key', 'held'], {
          cwd: folder,
          env,
        });
        expect(refused.code).toBe(2);
        expect(refused.stderr).toMatch(/JOURNAL_LOCKED.*another crm-ferry process runs "held"/);
        expect(readdirSync(join(folder, '.crm-ferry')).sort()).toEqual(before);
      } finally {
        await other.close();
      }
    },
  );

  withPostgres(
    'a backup on a shared volume takes over the lock of a pod that died, with the store only',
    async (url) => {
      const env = { CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token };
      const volume = join(work, 'volume', 'acme-backup');
      mkdirSync(volume, { recursive: true });
      // What a pod killed in the middle of a backup left on the volume.
      const left = JSON.stringify({ pid: 4242, host: 'crm-ferry-worker-7f9c-gone', since: '2026-11-29T02:15:00.000Z' });
      writeFileSync(join(volume, '.backup.lock'), left);
      const alone = await runCli(['backup', '--out', volume], { cwd: work, env });
      expect(alone.code).toBe(2);
      expect(alone.stderr).toMatch(/JOURNAL_LOCKED.*on crm-ferry-worker-7f9c-gone/);
      const stored = await runCli(['backup', '--out', volume, '--state-store', url], { cwd: work, env });
      expect(stored.code, stored.stderr).toBe(0);
      expect(existsSync(join(volume, 'manifest.json'))).toBe(true);
      expect(existsSync(join(volume, '.backup.lock'))).toBe(false);
    },
  );

  withPostgres(
    'export --since auto keeps its time in the store: the second run, elsewhere, has only the change',
    async (url) => {
      const env = { CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token, CRM_FERRY_STATE_STORE: url };
      const args = ['export', 'parties', '--since', 'auto', '--state-key', 'nightly', '--out', 'parties.csv'];
      const first = await runCli(args, { cwd: machine('export-one'), env });
      expect(first.code, first.stderr).toBe(0);
      const all = readFileSync(join(work, 'export-one', 'parties.csv'), 'utf8')
        .trim()
        .split('\n').length;
      const made = await box.v2('POST', '/parties', {
        party: { type: 'person', firstName: 'Nightly', lastName: 'Change' },
      });
      expect(made.status).toBe(201);
      const second = await runCli(args, { cwd: machine('export-two'), env });
      expect(second.code, second.stderr).toBe(0);
      // The first run read everything; the second, in another folder, only what changed since it began
      // (less the overlap for clocks, which here holds the records made just before).
      expect(first.stdout).not.toMatch(/changed since/);
      expect(second.stdout).toMatch(/changed since \d{4}-\d\d-\d\dT/);
      const lines = readFileSync(join(work, 'export-two', 'parties.csv'), 'utf8')
        .trim()
        .split('\n');
      expect(lines.length).toBe(all + 1);
      expect(lines.some((line) => line.includes('Nightly'))).toBe(true);
      expect(existsSync(join(work, 'export-two', 'parties.deleted.csv'))).toBe(true);
      expect(existsSync(join(work, 'export-two', 'nightly'))).toBe(false);
    },
  );
});
