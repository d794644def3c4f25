// Requests per record of `crm-ferry backup`: an account of N organisations (each with a person, an
// opportunity, a project with an additional party, a note and a task; every 5th note with an
// attachment, every 3rd project with a track) backed up in full, then incrementally after 1% of the
// parties changed. Not a test; run it with `npm run bench -- backup [--rows N]`.
// Prints records and requests by file, and the requests per record of the lists (pages of 100) and
// of the per-record steps (additional parties per project, tracks per tracked record, attachments);
// then restores the backup into an empty sandbox and prints the restore's requests per record,
// then restores it again into that account with a new state folder (every record found, nothing written).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runBackup, runRestore } from '../src/backup/index.ts';
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
  // Restore into an empty account: about one request per record plus the links.
  const target = await startTestSandbox();
  const targetClient = new CrmClient({ baseUrl: target.url, auth: target.token });
  try {
    const restored = await runRestore({ from: dir, workDir: join(dir, 'restore') }, { client: targetClient, account: { baseUrl: target.url, account: target.url } });
    const written = restored.import.steps.reduce((sum, step) => sum + step.created + step.updated + step.matched, 0);
    const linkRequests = restored.links.kaseParties + restored.links.tracks.ofParties;
    const total = targetClient.transport.requestsSent;
    console.log(JSON.stringify({ run: 'restore', recordsWritten: written, requests: total, requestsPerRecord: +(total / written).toFixed(3), importRequests: restored.import.requests, importRequestsPerRecord: +(restored.import.requests / written).toFixed(3), linksAdded: linkRequests, steps: Object.fromEntries(restored.import.steps.map((s) => [s.step, s.created])) }));
    // The same backup again into that account with a new state folder: every record is found by
    // its match rules, the entries and tasks of each are looked at, nothing is written.
    const before = targetClient.transport.requestsSent;
    const again = await runRestore({ from: dir, workDir: join(dir, 'restore'), stateDir: join(dir, 'restore', 'state-again') }, { client: targetClient, account: { baseUrl: target.url, account: target.url } });
    const requests = targetClient.transport.requestsSent - before;
    const found = again.import.steps.reduce((sum, step) => sum + step.matched, 0);
    const created = again.import.steps.reduce((sum, step) => sum + step.created, 0);
    console.log(JSON.stringify({ run: 'restore-again', recordsFound: found, created, present: again.entries.present, requests, requestsPerRecordFound: +(requests / found).toFixed(3), importRequests: again.import.requests, lookAtEntriesAndTasks: again.lookedAt.requests, links: requests - again.import.requests - again.lookedAt.requests }));
  } finally {
    await targetClient.close();
    await target.close();
  }
} finally {
  await box.close();
  rmSync(dir, { recursive: true, force: true });
}
