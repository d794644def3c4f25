// crm-ferry backup against a sandbox: every file of the folder, its manifest and checksums, the
// attachment files, an incremental run, and a backup killed (SIGKILL) half-way and continued.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MANIFEST_FILE, PROGRESS_FILE, runBackup, type Manifest } from '../../src/backup/index.ts';
import { CrmClient, RecordService } from '../../src/client/index.ts';
import { seedBackupAccount, type SeededAccount } from '../helpers/backup-account.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = join(ROOT, 'bin/crm-ferry.js');

let box: TestSandbox;
let seeded: SeededAccount;
const dir = mkdtempSync(join(tmpdir(), 'ferry-backup-'));

beforeAll(async () => {
  box = await startTestSandbox();
  seeded = await seedBackupAccount(box, 24);
});

afterAll(async () => {
  await box?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function backup(out: string, since: 'auto' | null = null) {
  const client = new CrmClient({ baseUrl: box.url, auth: box.token });
  try {
    return await runBackup({ out, since }, { client, account: { baseUrl: box.url, account: box.url } });
  } finally {
    await client.close();
  }
}

function lines(folder: string, name: string): any[] {
  return readFileSync(join(folder, name), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** Waits until the backup in `folder` (run by `child`) has recorded `step` done. */
async function stepDone(folder: string, step: string, child: ChildProcess): Promise<void> {
  for (;;) {
    const progress = existsSync(join(folder, PROGRESS_FILE))
      ? JSON.parse(readFileSync(join(folder, PROGRESS_FILE), 'utf8'))
      : null;
    if (progress?.steps?.[step]?.done) return;
    if (child.exitCode !== null) throw new Error(`the backup ended before its step ${step} was seen done`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const sha = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

describe('backup', () => {
  // The incremental test continues the folder of the first one.
  const full = join(dir, 'full');

  it('writes every record, link and attachment, with a manifest whose counts and checksums hold', async () => {
    const old = (await box.v2('POST', '/pipelines', { pipeline: { name: 'Retired pipeline' } })).body.pipeline.id;
    expect((await box.v2('DELETE', `/pipelines/${old}`)).status).toBe(204);
    const summary = await backup(full);
    expect(summary.interrupted).toBe(false);
    const manifest = JSON.parse(readFileSync(join(full, MANIFEST_FILE), 'utf8')) as Manifest;
    expect(manifest.format).toBe('crm-ferry-backup');
    expect(manifest.account).toBe(box.url);
    for (const [name, file] of Object.entries(manifest.files)) {
      const bytes = readFileSync(join(full, name));
      expect({ name, sha: sha(bytes), records: lines(full, name).length }).toEqual({
        name,
        sha: file.sha256,
        records: file.records,
      });
    }
    expect(
      lines(full, 'parties.jsonl')
        .map((p) => p.id)
        .sort((a, b) => a - b),
    ).toEqual([...seeded.organisations, ...seeded.people].sort((a, b) => a - b));
    const person = lines(full, 'parties.jsonl').find((p) => p.id === seeded.people[3]);
    expect(person.organisation.id).toBe(seeded.organisations[3]);
    expect(
      lines(full, 'parties.jsonl')
        .find((p) => p.id === seeded.organisations[1])
        .tags.map((t: any) => t.name),
    ).toEqual(['VIP']);
    expect(lines(full, 'opportunities.jsonl')).toHaveLength(seeded.opportunities.length);
    expect(lines(full, 'kases.jsonl')).toHaveLength(seeded.kases.length);
    expect(lines(full, 'kase-parties.jsonl')).toContainEqual({
      kase: { id: seeded.kases[5] },
      party: { id: seeded.people[5] },
    });
    // Projects 0, 3, 6 ... have the onboarding track.
    const tracks = lines(full, 'tracks.jsonl');
    expect(tracks.map((t) => t.appliedTo).sort((a, b) => a.id - b.id)).toEqual(
      seeded.kases.filter((_, i) => i % 3 === 0).map((id) => ({ entity: 'kases', id })),
    );
    expect(lines(full, 'tasks.jsonl').length).toBeGreaterThanOrEqual(seeded.people.length);
    expect(
      lines(full, 'entries.jsonl')
        .map((e) => e.id)
        .sort((a, b) => a - b),
    ).toEqual([...seeded.entries].sort((a, b) => a - b));
    const attachments = lines(full, 'attachments.jsonl');
    expect(attachments).toHaveLength(seeded.attachments);
    for (const attachment of attachments)
      expect(sha(readFileSync(join(full, attachment.file)))).toBe(attachment.sha256);
    expect(readFileSync(join(full, attachments[0].file), 'utf8')).toContain('minutes of meeting');
    expect(lines(full, 'milestones.jsonl').length).toBeGreaterThan(0);
    // An archived pipeline is told apart by being in the full list only.
    expect(lines(full, 'pipelines-all.jsonl').map((p) => p.name)).toContain('Retired pipeline');
    expect(lines(full, 'pipelines.jsonl').map((p) => p.name)).not.toContain('Retired pipeline');
    expect(lines(full, 'field-definitions-parties.jsonl').length).toBeGreaterThan(0);
    expect(lines(full, 'users.jsonl').map((u) => u.username)).toContain('admin');
    expect(existsSync(join(full, PROGRESS_FILE))).toBe(false);
    expect(existsSync(join(full, '.work'))).toBe(false);
    // About one request per 100 records for the lists, plus one per attachment, project and tracked record.
    const records = Object.values(manifest.files).reduce((sum, f) => sum + f.records, 0);
    expect(summary.requests).toBeLessThan(records);
  });

  it('--since auto reads only what changed, merges it in and removes what was deleted', async () => {
    const changed = seeded.organisations[2]!;
    const gone = seeded.organisations[4]!;
    await box.v2('PUT', `/parties/${changed}`, { party: { about: 'Changed after the backup' } });
    // An organisation with people and projects may be deleted later (202): wait for it.
    const client = new CrmClient({ baseUrl: box.url, auth: box.token });
    await new RecordService(client).remove('party', gone);
    await client.close();
    const added = (await box.v2('POST', '/parties', { party: { type: 'organisation', name: 'Newcomer Ltd' } })).body
      .party.id;
    const manifestFile = join(full, MANIFEST_FILE);
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
    const summary = await backup(full, 'auto');
    expect(summary.since).toBe(new Date(Date.parse(manifest.startedAt) - 5 * 60_000).toISOString());
    const parties = lines(full, 'parties.jsonl');
    expect(parties.find((p) => p.id === changed).about).toBe('Changed after the backup');
    expect(parties.some((p) => p.id === gone)).toBe(false);
    expect(parties.some((p) => p.id === added)).toBe(true);
    expect(new Set(parties.map((p) => p.id)).size).toBe(parties.length);
    expect(summary.deleted.parties).toBeGreaterThanOrEqual(1);
    const after = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
    expect(after.files['parties.jsonl']!.sha256).toBe(sha(readFileSync(join(full, 'parties.jsonl'))));
    expect(lines(full, 'deleted.jsonl')).toContainEqual(expect.objectContaining({ entity: 'parties', id: gone }));
  });

  it('refuses a folder that holds other files', async () => {
    const other = join(dir, 'other');
    rmSync(other, { recursive: true, force: true });
    await import('node:fs/promises').then((fs) => fs.mkdir(other));
    writeFileSync(join(other, 'notes.txt'), 'mine');
    await expect(backup(other)).rejects.toMatchObject({ code: 'USAGE' });
  });
});

describe('backup killed with SIGKILL', () => {
  it('is continued by the same command and ends with the same files as an uninterrupted backup', async () => {
    const slow = await startTestSandbox({ faults: { latencyMs: 30 } });
    try {
      await seedBackupAccount(slow, 12, { attachmentEvery: 2 });
      const reference = join(dir, 'reference');
      const client = new CrmClient({ baseUrl: slow.url, auth: slow.token });
      const uninterrupted = await runBackup(
        { out: reference, since: null },
        { client, account: { baseUrl: slow.url, account: slow.url } },
      );
      const killed = join(dir, 'killed');
      const child = spawn(
        process.execPath,
        [BIN, 'backup', '--out', killed, '--base-url', slow.url, '--token', slow.token],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      const ended = new Promise((done) => child.on('close', done));
      // Kill once the records are being read: some steps done, the folder not complete.
      await stepDone(killed, 'opportunities', child);
      child.kill('SIGKILL');
      await ended;
      expect(existsSync(join(killed, MANIFEST_FILE))).toBe(false);
      const before = JSON.parse(readFileSync(join(killed, PROGRESS_FILE), 'utf8'));
      const summary = await runBackup(
        { out: killed, since: null },
        { client, account: { baseUrl: slow.url, account: slow.url } },
      );
      await client.close();
      expect(summary.resumed).toBe(true);
      // What was read before the kill is not asked again.
      expect(before.requests).toBeGreaterThan(0);
      expect(summary.requests).toBeLessThan(uninterrupted.requests);
      expect(before.steps.parties.done).toBe(true);
      const manifest = JSON.parse(readFileSync(join(killed, MANIFEST_FILE), 'utf8')) as Manifest;
      const expected = JSON.parse(readFileSync(join(reference, MANIFEST_FILE), 'utf8')) as Manifest;
      for (const name of Object.keys(expected.files)) {
        expect({
          name,
          lines: lines(killed, name).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
        }).toEqual({
          name,
          lines: lines(reference, name).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
        });
        expect(manifest.files[name]!.records).toBe(expected.files[name]!.records);
      }
      expect(readdirSync(join(killed, 'attachments')).sort()).toEqual(
        readdirSync(join(reference, 'attachments')).sort(),
      );
      expect(readdirSync(killed).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    } finally {
      await slow.close();
    }
  }, 60_000);
});

describe('backup interrupted (SIGINT)', () => {
  it('exits 130 with what was read kept and no manifest; the same command continues it', async () => {
    const slow = await startTestSandbox({ faults: { latencyMs: 30 } });
    try {
      await seedBackupAccount(slow, 6, { attachmentEvery: 3 });
      const out = join(dir, 'interrupted');
      const args = [BIN, 'backup', '--out', out, '--base-url', slow.url, '--token', slow.token];
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const ended = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
      await stepDone(out, 'parties', child);
      child.kill('SIGINT');
      expect(await ended).toBe(130);
      expect(stderr).toContain('run the same command again to continue');
      expect(existsSync(join(out, MANIFEST_FILE))).toBe(false);
      expect(JSON.parse(readFileSync(join(out, PROGRESS_FILE), 'utf8')).steps.parties.done).toBe(true);
      const again = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      again.stdout.on('data', (chunk) => (stdout += chunk));
      expect(await new Promise((done) => again.on('close', done))).toBe(0);
      expect(stdout).toContain('continuing an interrupted backup');
      expect(lines(out, 'parties.jsonl')).toHaveLength(12);
    } finally {
      await slow.close();
    }
  }, 60_000);
});

describe('two backups into one folder', () => {
  it('the second is refused while the first runs (JOURNAL_LOCKED), and nothing of the first is harmed', async () => {
    const out = join(dir, 'locked');
    const first = backup(out);
    // The first has taken the lock once its folder exists.
    while (!existsSync(join(out, '.backup.lock'))) await new Promise((r) => setTimeout(r, 1));
    await expect(backup(out)).rejects.toMatchObject({ code: 'JOURNAL_LOCKED' });
    expect((await first).interrupted).toBe(false);
    expect(existsSync(join(out, MANIFEST_FILE))).toBe(true);
    expect(existsSync(join(out, '.backup.lock'))).toBe(false);
  });
});
