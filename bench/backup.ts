// Requests per record of `crm-ferry backup`: an account of N organisations (each with a person, an
// opportunity, a project with an additional party, a note and a task; every 5th note with an
// attachment, every 3rd project with a track) backed up in full, then incrementally after 1% of the
// parties changed. Not a test; run it with `npm run bench -- backup [--rows N]`.
// Prints records and requests by file, and the requests per record of the lists (pages of 100) and
// of the per-record steps (additional parties per project, tracks per tracked record, attachments).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runBackup } from '../src/backup/index.ts';
import { CrmClient } from '../src/client/index.ts';
import { seedBackupAccount } from '../test/helpers/backup-account.ts';
import { startTestSandbox } from '../test/helpers/sandbox.ts';

const { values } = parseArgs({ options: { rows: { type: 'string' } }, strict: false });
const rows = Number(values.rows ?? 1000);

// The account is filled an hour back, so that the incremental run's 5-minute overlap takes in only the changes.
let offsetMs = -3_600_000;
const box = await startTestSandbox({ now: () => new Date(Date.now() + offsetMs) });
const dir = mkdtempSync(join(tmpdir(), 'crm-ferry-bench-backup-'));
try {
  const seeded = await seedBackupAccount(box, rows);
  const client = new CrmClient({ baseUrl: box.url, auth: box.token });
  const full = await runBackup({ out: dir, since: null }, { client, account: box.url });
  const perRecordSteps = ['kase-parties', 'tracks', 'attachments', 'milestones'];
  let listRecords = 0;
  let listPages = 0;
  for (const [name, file] of Object.entries(full.files)) {
    if (perRecordSteps.includes(name.replace(/\.jsonl$/, ''))) continue;
    listRecords += file.records;
    listPages += Math.max(1, Math.ceil(file.records / 100));
  }
  const records = Object.values(full.files).reduce((sum, file) => sum + file.records, 0);
  const perRecord = full.requests - listPages;
  console.log(JSON.stringify({ run: 'full', organisations: rows, records, attachments: full.attachments.files, requests: full.requests, requestsPerRecord: +(full.requests / records).toFixed(4), listPages, listRecords, listRequestsPerRecord: +(listPages / listRecords).toFixed(4), perRecordRequests: perRecord, projects: seeded.kases.length, trackedRecords: full.files['tracks.jsonl']?.records, files: Object.fromEntries(Object.entries(full.files).map(([name, f]) => [name, f.records])) }));
  offsetMs = 0;
  for (const id of seeded.organisations.slice(0, Math.max(1, Math.floor(rows / 100)))) await box.v2('PUT', `/parties/${id}`, { party: { about: 'changed' } });
  const incremental = await runBackup({ out: dir, since: 'auto' }, { client, account: box.url });
  console.log(JSON.stringify({ run: 'incremental', changedParties: Math.max(1, Math.floor(rows / 100)), requests: incremental.requests, downloaded: incremental.attachments.downloaded, records: Object.values(incremental.files).reduce((sum, file) => sum + file.records, 0) }));
  await client.close();
} finally {
  await box.close();
  rmSync(dir, { recursive: true, force: true });
}
