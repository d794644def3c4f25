// crm-ferry backup and restore as commands: their summaries and exit codes.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/fake-io.ts';
import { seedBackupAccount } from '../helpers/backup-account.ts';
import { allPages, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

let a: TestSandbox;
let b: TestSandbox;
const dir = mkdtempSync(join(tmpdir(), 'ferry-cli-backup-'));
const out = join(dir, 'backup');

beforeAll(async () => {
  [a, b] = await Promise.all([startTestSandbox(), startTestSandbox()]);
  await seedBackupAccount(a, 3);
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const connect = (box: TestSandbox) => ['--base-url', box.url, '--token', box.token];

describe('crm-ferry backup and restore', () => {
  it.each([
    [['backup'], /backup needs --out DIR/],
    [['backup', '--out', 'x', '--since', 'yesterday'], /--since takes auto, got "yesterday"/],
    [['backup', 'extra', '--out', 'x'], /backup takes no arguments/],
    [['restore'], /restore needs DIR/],
  ])('%j is refused with exit 2', async (argv, message) => {
    const result = await runCli([...argv, ...connect(a)], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('a folder without a manifest is not restored (exit 2)', async () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty, { recursive: true });
    const result = await runCli(['restore', empty, ...connect(b)], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('is not a complete backup: it has no manifest.json');
  });

  it('backs up A, restores into B (exit 0), and says what it did', async () => {
    const backup = await runCli(['backup', '--out', out, ...connect(a)], { cwd: dir });
    expect(backup).toMatchObject({ code: 0 });
    expect(backup.stdout).toMatch(/^Backed up \d+ records in \d+ files and 1 attachment files; \d+ requests\./);
    const restore = await runCli(['restore', out, ...connect(b)], { cwd: dir });
    expect(restore.stderr).not.toMatch(/Error/);
    expect(restore.code).toBe(0);
    expect(restore.stdout).toContain(
      'Links: 3 additional parties of projects carried; 1 tracks applied (1 as their project or opportunity was created, 0 to parties).',
    );
    // Two runs of the importer, the account's names read once for both.
    expect(restore.stdout).toMatch(/^Requests: \d+ \(\d+ to read the account's names once, /m);
    expect(restore.stdout).toMatch(
      /^In all: \d+ requests \(the importer's, 0 to look at what the records found hold, 0 for the tracks of parties\)\.$/m,
    );
    expect((await allPages(b, '/parties', 'parties')).length).toBe((await allPages(a, '/parties', 'parties')).length);
  });

  it('restored again with --json and another state folder: one JSON summary, every record found, nothing added', async () => {
    const restore = await runCli(['restore', out, '--json', '--state-dir', join(dir, 'state-2'), ...connect(b)], {
      cwd: dir,
    });
    expect(restore.stderr).toBe('');
    expect(restore.code).toBe(0);
    const summary = JSON.parse(restore.stdout);
    expect(summary.import.stopped).toBeNull();
    expect(summary.import.setup).toMatchObject({ created: [] });
    expect(summary.import.steps.map((s: any) => [s.step, s.created])).toEqual([
      ['organisations', 0],
      ['people', 0],
      ['opportunities', 0],
      ['kases', 0],
      ['entries', 0],
      ['tasks', 0],
    ]);
    expect(summary.import.steps.reduce((sum: number, s: any) => sum + s.matched, 0)).toBe(3 * 4);
    expect(summary.entries.present).toEqual({ entries: 3, tasks: 3 });
    expect(summary.lookedAt.records).toBe(3 * 4);
  });
});
