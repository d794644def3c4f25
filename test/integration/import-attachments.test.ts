import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CrmClient } from '../../src/client/index.ts';
import { readAttachments } from '../../src/load/attachments.ts';
import { runImport, runRollback, type ImportSummary } from '../../src/load/index.ts';
import { validatePlan } from '../../src/plan/validate.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const work = mkdtempSync(join(tmpdir(), 'ferry-attach-'));
const sandboxes: TestSandbox[] = [];
afterEach(async () => {
  while (sandboxes.length > 0) await sandboxes.pop()?.close();
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const PLAN = `version: 1
steps:
  - { name: orgs, mapping: orgs.yaml, input: orgs.csv }
  - { name: notes, mapping: notes.yaml, input: notes.csv }
`;
const ORGS = `version: 1
entity: party
key: "{{id}}"
fields:
  - { to: name, value: { column: name } }
`;
// Two files a row: one typed by the source, one by its extension.
const NOTES = `version: 1
entity: entry
key: "{{id}}"
fields:
  - { to: party, ref: orgs, key: "{{org}}" }
  - { to: content, value: { column: text } }
  - { to: attachment, value: { column: file }, type: { column: fileType } }
  - { to: attachment, value: { column: extra } }
`;

async function importInto(box: TestSandbox, dir: string): Promise<ImportSummary> {
  const client = new CrmClient({ baseUrl: box.url, auth: box.token });
  try {
    return await runImport(
      { source: { kind: 'plan', planFile: join(dir, 'plan.yaml') }, stateDir: join(dir, '.crm-ferry') },
      { client, account: { baseUrl: box.url, account: box.url } },
    );
  } finally {
    await client.close();
  }
}

function notes(summary: ImportSummary) {
  return summary.steps.find((s) => s.step === 'notes');
}

/** A folder with the plan, its mappings, one organisation and these notes (a `files/` folder in it). */
function project(name: string, notesCsv: string): string {
  const dir = join(work, name);
  mkdirSync(join(dir, 'files'), { recursive: true });
  writeFileSync(join(dir, 'plan.yaml'), PLAN);
  writeFileSync(join(dir, 'orgs.yaml'), ORGS);
  writeFileSync(join(dir, 'notes.yaml'), NOTES);
  writeFileSync(join(dir, 'orgs.csv'), 'id,name\nO1,Acme\n');
  writeFileSync(join(dir, 'notes.csv'), `id,org,text,file,fileType,extra\n${notesCsv}`);
  return dir;
}

describe('attachments of imported notes', () => {
  it('are uploaded with their content type, and a file added or changed later is a change on the re-run', async () => {
    const box = await startTestSandbox();
    sandboxes.push(box);
    const dir = project('p1', 'N1,O1,Scanned the contract,files/contract.scan,image/tiff,files/offer.pdf\n');
    writeFileSync(join(dir, 'files/contract.scan'), 'II*\u0000 pretend tiff');
    // offer.pdf is not there yet.

    const first = await importInto(box, dir);
    expect(first.stopped).toBeNull();
    expect(notes(first)?.created).toBe(1);
    const list = await box.v2('GET', '/entries?perPage=100');
    const entry = list.body.entries.find((e: { content: string }) => e.content === 'Scanned the contract');
    expect(
      entry.attachments.map((a: { filename: string; contentType: string }) => [a.filename, a.contentType]),
    ).toEqual([['contract.scan', 'image/tiff']]);

    const again = await importInto(box, dir);
    expect(notes(again)?.unchanged).toBe(1);

    // The missing file arrives: the note gets it, typed by its extension.
    writeFileSync(join(dir, 'files/offer.pdf'), '%PDF-1.4 offer');
    const added = await importInto(box, dir);
    expect(notes(added)?.updated).toBe(1);
    let now = (await box.v2('GET', `/entries/${entry.id}`)).body.entry;
    expect(now.attachments.map((a: { filename: string; contentType: string }) => [a.filename, a.contentType])).toEqual([
      ['contract.scan', 'image/tiff'],
      ['offer.pdf', 'application/pdf'],
    ]);

    // A changed file replaces the one uploaded before.
    writeFileSync(join(dir, 'files/offer.pdf'), '%PDF-1.4 offer, second version');
    const changed = await importInto(box, dir);
    expect(notes(changed)?.updated).toBe(1);
    now = (await box.v2('GET', `/entries/${entry.id}`)).body.entry;
    expect(
      now.attachments.map((a: { filename: string; size: number | string }) => [a.filename, Number(a.size)]),
    ).toEqual([
      ['contract.scan', 17],
      ['offer.pdf', 30],
    ]);
    const download = await box.call('GET', `/api/v2/attachments/${now.attachments[1].id}`);
    expect(download.text).toBe('%PDF-1.4 offer, second version');

    // Rollback of that run takes its file away again (the replaced one cannot come back); the
    // next run, finding the file still there, adds it once.
    const client = new CrmClient({ baseUrl: box.url, auth: box.token });
    try {
      await runRollback(
        { stateDir: join(dir, '.crm-ferry') },
        { client, account: { baseUrl: box.url, account: box.url } },
      );
    } finally {
      await client.close();
    }
    now = (await box.v2('GET', `/entries/${entry.id}`)).body.entry;
    expect(now.attachments.map((a: { filename: string }) => a.filename)).toEqual(['contract.scan']);
    const redone = await importInto(box, dir);
    expect(notes(redone)?.updated).toBe(1);
    now = (await box.v2('GET', `/entries/${entry.id}`)).body.entry;
    expect(
      now.attachments.map((a: { filename: string; size: number | string }) => [a.filename, Number(a.size)]),
    ).toEqual([
      ['contract.scan', 17],
      ['offer.pdf', 30],
    ]);
  });

  it('a file that is not there is a NOT_CARRIED warning, not a reject; a folder in its place rejects the row', async () => {
    const dir = join(work, 'p2');
    mkdirSync(join(dir, 'folder.pdf'), { recursive: true });
    writeFileSync(join(dir, 'a.txt'), 'text');
    const read = await readAttachments([
      { path: join(dir, 'a.txt'), contentType: 'not a type' },
      { path: join(dir, 'gone.docx'), contentType: null },
    ]);
    expect(read.problem).toBeNull();
    expect(read.files.map((f) => [f.filename, f.contentType, f.size])).toEqual([['a.txt', 'text/plain', 4]]);
    expect(read.warnings).toEqual([
      expect.objectContaining({ code: 'NOT_CARRIED', field: 'attachment', value: 'gone.docx' }),
    ]);
    expect((await readAttachments([{ path: join(dir, 'folder.pdf'), contentType: null }])).problem).toContain(
      'is not a file',
    );
  });

  it('validate rejects what the run rejects for a file that is no file, and lets a missing one through', async () => {
    const box = await startTestSandbox();
    sandboxes.push(box);
    const dir = project('p3', 'N1,O1,One,files/folder.pdf,,\nN2,O1,Two,files/gone.pdf,,\n');
    mkdirSync(join(dir, 'files/folder.pdf'));
    const report = await validatePlan({ planFile: join(dir, 'plan.yaml'), rejectsDir: join(dir, 'rejects') });
    const validated = report.steps.find((s) => s.step === 'notes');
    expect([validated?.ok, validated?.rejected, validated?.reasons.map((r) => `${r.code} ${r.field}`)]).toEqual([
      1,
      1,
      ['SOURCE_UNREADABLE attachment'],
    ]);
    const ran = notes(await importInto(box, dir));
    expect([ran?.created, ran?.rejected]).toEqual([1, 1]);
    expect(readFileSync(ran?.rejectsFile as string, 'utf8')).toContain('SOURCE_UNREADABLE');
  });
});
