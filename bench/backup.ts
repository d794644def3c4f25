// Requests of `crm-ferry backup` and `crm-ferry restore`, side by side in one run over three books
// of accounts. Not a test; run it with `npm run bench -- backup [--rows N]`.
//
// - The benchmark's book: N organisations (default 1,000), each with a person, an opportunity, a
//   project with the person as additional party, a note and a task; every 5th note with an
//   attachment, every 3rd project with a track.
// - Notes-heavy: N/5 organisations, each person with 25 notes (every 10th with an attachment).
// - Project-heavy: N/5 organisations with 3 people and 10 projects each, every project with the 3
//   people as additional parties, every 3rd with a track.
//
// Each book is backed up in full (the benchmark's book also incrementally after 1% of its parties
// changed: requests by kind), restored into an empty sandbox, then restored again into that account
// with a new state folder. Requests are counted at the target sandbox's HTTP server. The floor of a
// restore: one write per record, per additional party and per file, one per track the interface
// takes on no create (a party's), the set-up's creates, and the account's names read once.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runBackup, runRestore, type RestoreSummary } from '../src/backup/index.ts';
import { CrmClient } from '../src/client/index.ts';
import { type BookShape, seedBackupAccount } from '../test/helpers/backup-account.ts';
import { startTestSandbox, type TestSandbox } from '../test/helpers/sandbox.ts';

const { values } = parseArgs({ options: { rows: { type: 'string' } }, strict: false });
const rows = Number(values.rows ?? 1000);

const BOOKS: Array<{ name: string; organisations: number; shape: BookShape }> = [
  { name: 'benchmark', organisations: rows, shape: {} },
  { name: 'notes-heavy', organisations: Math.max(1, Math.round(rows / 5)), shape: { notes: 25, attachmentEvery: 10 } },
  {
    name: 'project-heavy',
    organisations: Math.max(1, Math.round(rows / 5)),
    shape: { people: 3, projects: 10, contacts: 3 },
  },
];

/** Counts every request the sandbox's HTTP server is sent. */
function countRequests(box: TestSandbox): { count: () => number } {
  let count = 0;
  box.app.server.on('request', () => (count += 1));
  return { count: () => count };
}

const lines = (dir: string, name: string): Array<Record<string, any>> =>
  readFileSync(join(dir, name), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

/** What a restore of the backup in `dir` must write at the least, from the backup's files and what the restore found it had to read. */
function floorOf(
  dir: string,
  summary: RestoreSummary,
): {
  records: number;
  contacts: number;
  files: number;
  partyTracks: number;
  setup: number;
  names: number;
  total: number;
} {
  const tasks = lines(dir, 'tasks.jsonl');
  const records =
    lines(dir, 'parties.jsonl').length +
    lines(dir, 'opportunities.jsonl').length +
    lines(dir, 'kases.jsonl').length +
    // The entries of completed tasks the service files again are not written; a track makes its tasks.
    lines(dir, 'entries.jsonl').length -
    summary.entries.leftOut.taskEntries +
    tasks.filter((t) => t.hasTrack !== true).length;
  const contacts = lines(dir, 'kase-parties.jsonl').length;
  const files = lines(dir, 'attachments.jsonl').length;
  const partyTracks = lines(dir, 'tracks.jsonl').filter((t) => t.appliedTo.entity === 'parties').length;
  const setup = summary.import.setup?.created.length ?? 0;
  const names = summary.import.requestsForNames;
  return {
    records,
    contacts,
    files,
    partyTracks,
    setup,
    names,
    total: records + contacts + files + partyTracks + setup + names,
  };
}

const results: Array<Record<string, unknown>> = [];
for (const book of BOOKS) {
  // The account is filled an hour back, so that the incremental run's 5-minute overlap takes in only the changes.
  let offsetMs = -3_600_000;
  const box = await startTestSandbox({ now: () => new Date(Date.now() + offsetMs) });
  const dir = mkdtempSync(join(tmpdir(), `crm-ferry-bench-backup-${book.name}-`));
  try {
    const seeded = await seedBackupAccount(box, book.organisations, book.shape);
    const client = new CrmClient({ baseUrl: box.url, auth: box.token });
    const full = await runBackup(
      { out: dir, since: null },
      { client, account: { baseUrl: box.url, account: box.url } },
    );
    const records = Object.values(full.files).reduce((sum, file) => sum + file.records, 0);
    const perRecordSteps = ['kase-parties', 'tracks', 'attachments', 'milestones'];
    let listPages = 0;
    for (const [name, file] of Object.entries(full.files))
      if (!perRecordSteps.includes(name.replace(/\.jsonl$/, '')))
        listPages += Math.max(1, Math.ceil(file.records / 100));
    console.log(
      JSON.stringify({
        book: book.name,
        run: 'backup',
        organisations: book.organisations,
        records,
        attachments: full.attachments.files,
        requests: full.requests,
        requestsPerRecord: +(full.requests / records).toFixed(4),
        listPages,
        perRecordRequests: full.requests - listPages,
        projects: seeded.kases.length,
        files: Object.fromEntries(Object.entries(full.files).map(([name, f]) => [name, f.records])),
      }),
    );
    if (book.name === 'benchmark') {
      offsetMs = 0;
      const changed = Math.max(1, Math.floor(book.organisations / 100));
      for (const id of seeded.organisations.slice(0, changed))
        await box.v2('PUT', `/parties/${id}`, { party: { about: 'changed' } });
      const incremental = await runBackup(
        { out: dir, since: 'auto' },
        { client, account: { baseUrl: box.url, account: box.url } },
      );
      console.log(
        JSON.stringify({
          book: book.name,
          run: 'backup --since auto',
          changedParties: changed,
          requests: incremental.requests,
          downloaded: incremental.attachments.downloaded,
        }),
      );
    }
    await client.close();

    const target = await startTestSandbox();
    const counter = countRequests(target);
    const targetClient = new CrmClient({ baseUrl: target.url, auth: target.token });
    try {
      const account = { baseUrl: target.url, account: target.url };
      const startedAt = Date.now();
      const restored = await runRestore(
        { from: dir, workDir: join(dir, 'restore') },
        { client: targetClient, account },
      );
      const requests = counter.count();
      const floor = floorOf(dir, restored);
      const created = restored.import.steps.reduce((sum, step) => sum + step.created, 0);
      const rejected = restored.import.steps.reduce((sum, step) => sum + step.rejected, 0);
      const restore = {
        requests,
        floor: floor.total,
        ratio: +(requests / floor.total).toFixed(4),
        beyondFloor: requests - floor.total,
        created,
        rejected,
        floorParts: floor,
        elapsedMs: Date.now() - startedAt,
      };
      console.log(JSON.stringify({ book: book.name, run: 'restore', ...restore }));

      const before = counter.count();
      const again = await runRestore(
        { from: dir, workDir: join(dir, 'restore'), stateDir: join(dir, 'restore', 'state-again') },
        { client: targetClient, account },
      );
      const againRequests = counter.count() - before;
      const matched = again.import.steps.reduce((sum, step) => sum + step.matched, 0);
      const found = matched + again.entries.present.entries + again.entries.present.tasks;
      const written = again.import.steps.reduce((sum, step) => sum + step.created + step.updated, 0);
      const second = {
        requests: againRequests,
        recordsFound: found,
        matched,
        present: again.entries.present,
        written,
        recordsPerRequest: +(found / againRequests).toFixed(1),
        names: again.import.requestsForNames,
        lookAtEntriesAndTasks: again.lookedAt.requests,
      };
      console.log(JSON.stringify({ book: book.name, run: 'restore again', ...second }));
      results.push({
        book: book.name,
        restoreRequests: requests,
        floor: floor.total,
        ratio: restore.ratio,
        againRequests,
        found,
        matched,
        recordsPerRequest: second.recordsPerRequest,
        matchedPerRequest: +(matched / againRequests).toFixed(1),
        ok: restore.ratio <= 1.05 && found / againRequests >= 50 && rejected === 0 && written === 0,
      });
    } finally {
      await targetClient.close();
      await target.close();
    }
  } finally {
    await box.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
// found: records matched, and entries and tasks found on them; matched: the records alone.
console.log(
  '\nbook            restore  floor  ratio   again  found  found/request  matched/request  goal (<= 1.05, >= 50 found)',
);
for (const r of results) {
  console.log(
    `${String(r.book).padEnd(15)} ${String(r.restoreRequests).padStart(7)} ${String(r.floor).padStart(6)} ${String(r.ratio).padStart(6)} ${String(r.againRequests).padStart(7)} ${String(r.found).padStart(6)} ${String(r.recordsPerRequest).padStart(14)} ${String(r.matchedPerRequest).padStart(16)}  ${r.ok ? 'met' : 'NOT MET'}`,
  );
}
if (results.some((r) => !r.ok)) process.exitCode = 1;
