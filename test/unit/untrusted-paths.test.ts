// Every place of the state folder, the result files, the spool and export's attachment folder that
// reads or writes a path, with a link planted there (or a name that climbs out): each is refused
// (PATH_UNSAFE) or the link is replaced by a file of crm-ferry's own, and nothing outside receives
// a byte or is read as crm-ferry's. The backup's paths are tested in the backup's own files.
//
// Four rows held before issue 24's fix too, and stay to pin the rule: a success file (made under a
// temporary name and renamed over the link), a rejects file (a file that is not a rejects file is
// never overwritten), verify's differences file (writeFileAtomic), and a climbing attachment name
// (export made it a plain name). Every other row fails without it.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordService } from '../../src/client/index.ts';
import { FerryError } from '../../src/errors/index.ts';
import { normaliseExportOptions, runExport } from '../../src/export/index.ts';
import {
  JournalWriter,
  loadJournal,
  readRollbacks,
  readStateSteps,
  StateDir,
  writeStateSteps,
} from '../../src/journal/index.ts';
import { runImport, runRollback } from '../../src/load/index.ts';
import { SuccessWriter } from '../../src/load/results.ts';
import { RejectsWriter } from '../../src/mapping/index.ts';
import { V1Spool, v1SpoolBase, type V1SpoolKey } from '../../src/sources/index.ts';
import { writeFileAtomic } from '../../src/util/index.ts';
import { sandboxForFile } from '../helpers/sandbox-client.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const work = mkdtempSync(join(tmpdir(), 'ferry-untrusted-'));
const account = { baseUrl: 'https://a.example', account: 'https://a.example' };
const noUsers = async (): Promise<number[]> => [];
const SECRET = "not crm-ferry's: must stay as it is\n";
const KEY: V1SpoolKey = {
  address: 'https://old.example',
  list: 'party',
  record: null,
  wireFormat: 'xml',
  since: null,
  pageSize: 100,
};

const sandbox = sandboxForFile();
afterAll(() => rmSync(work, { recursive: true, force: true }));

let cases = 0;

/** A state folder a run left, and beside it a folder that is not crm-ferry's, with a file in it. */
async function place(): Promise<{ state: string; outside: string; secret: string }> {
  cases += 1;
  const base = join(work, `c${cases}`);
  const state = join(base, '.crm-ferry');
  const outside = join(base, 'outside');
  mkdirSync(outside, { recursive: true });
  const secret = join(outside, 'secret.txt');
  writeFileSync(secret, SECRET);
  const opened = await StateDir.open({ dir: state, account, users: noUsers });
  const writer = await JournalWriter.open(opened.journalFile('people'));
  await writer.append({ t: 'cancel', k: 'a', run: 'r1', at: '2026-01-01T00:00:00.000Z' });
  await writer.close();
  await opened.close();
  return { state, outside, secret };
}

/** Replaces `path` (inside the state folder) by a link to `target`. */
function plant(path: string, target: string): void {
  rmSync(path, { recursive: true, force: true });
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path);
}

async function refusal(action: Promise<unknown>): Promise<FerryError> {
  const error = await action.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FerryError);
  return error as FerryError;
}

type Outcome = 'refused' | 'replaced';

interface Row {
  place: string;
  /** Plants the link (or the name) and does what crm-ferry does there. */
  act(p: { state: string; outside: string; secret: string }): Promise<unknown>;
  outcome: Outcome;
  /** For a link replaced: where the link was. */
  link?: (p: { state: string }) => string;
}

const stateRows: Row[] = [
  {
    place: 'the journal of a step (loading it)',
    act: async ({ state, secret }) => {
      plant(join(state, 'journal', 'people.jsonl'), secret);
      return loadJournal(join(state, 'journal', 'people.jsonl'));
    },
    outcome: 'refused',
  },
  {
    place: 'the journal of a step (appending to it)',
    act: async ({ state, secret }) => {
      plant(join(state, 'journal', 'people.jsonl'), secret);
      const writer = await JournalWriter.open(join(state, 'journal', 'people.jsonl'));
      await writer.append({ t: 'cancel', k: 'b', run: 'r2', at: '2026-01-01T00:00:00.000Z' });
      await writer.close();
    },
    outcome: 'refused',
  },
  {
    place: 'a journal linked to a file that does not exist yet (created through the link)',
    act: async ({ state, outside }) => {
      plant(join(state, 'journal', 'new.jsonl'), join(outside, 'created-through-link.jsonl'));
      await JournalWriter.open(join(state, 'journal', 'new.jsonl'));
    },
    outcome: 'refused',
  },
  {
    place: 'the journal folder (opening the state)',
    act: async ({ state, outside }) => {
      writeFileSync(join(outside, 'people.jsonl'), SECRET);
      plant(join(state, 'journal'), outside);
      return StateDir.open({ dir: state, account, users: noUsers });
    },
    outcome: 'refused',
  },
  {
    place: 'the journal folder (loading a journal, as restore and verify do)',
    act: async ({ state, outside }) => {
      writeFileSync(join(outside, 'people.jsonl'), SECRET);
      plant(join(state, 'journal'), outside);
      return loadJournal(join(state, 'journal', 'people.jsonl'));
    },
    outcome: 'refused',
  },
  {
    place: 'the results folder (opening the state: import, verify, rollback)',
    act: async ({ state, outside }) => {
      plant(join(state, 'results'), outside);
      return StateDir.open({ dir: state, account, users: noUsers, existing: true });
    },
    outcome: 'refused',
  },
  {
    place: 'the results folder (a success file)',
    act: async ({ state, outside }) => {
      plant(join(state, 'results'), outside);
      const writer = await SuccessWriter.open(join(state, 'results', 'people.success.csv'));
      await writer.commit();
    },
    outcome: 'refused',
  },
  {
    place: 'a success file',
    act: async ({ state, secret }) => {
      plant(join(state, 'results', 'people.success.csv'), secret);
      const writer = await SuccessWriter.open(join(state, 'results', 'people.success.csv'));
      await writer.write({ row: 2, key: 'a', action: 'created', id: 1, url: 'u', warnings: '' });
      await writer.commit();
    },
    outcome: 'replaced',
    link: ({ state }) => join(state, 'results', 'people.success.csv'),
  },
  {
    place: 'a rejects file',
    act: async ({ state, secret }) => {
      plant(join(state, 'results', 'people.rejects.csv'), secret);
      const writer = await RejectsWriter.open(join(state, 'results', 'people.rejects.csv'), ['id']);
      await writer.commit();
    },
    outcome: 'refused',
  },
  {
    place: "verify's differences file",
    act: async ({ state, secret }) => {
      plant(join(state, 'results', 'verify.differences.csv'), secret);
      await writeFileAtomic(join(state, 'results', 'verify.differences.csv'), 'differences\n');
    },
    outcome: 'replaced',
    link: ({ state }) => join(state, 'results', 'verify.differences.csv'),
  },
  {
    place: 'state.json',
    act: async ({ state, outside }) => {
      // A state of the same account elsewhere: still not this state's.
      writeFileSync(
        join(outside, 'state.json'),
        JSON.stringify({ format: 1, account, created: '2026-01-01T00:00:00.000Z' }),
      );
      plant(join(state, 'state.json'), join(outside, 'state.json'));
      return StateDir.open({ dir: state, account, users: noUsers });
    },
    outcome: 'refused',
  },
  {
    place: 'steps.json (opening the state)',
    act: async ({ state, secret }) => {
      plant(join(state, 'steps.json'), secret);
      return StateDir.open({ dir: state, account, users: noUsers });
    },
    outcome: 'refused',
  },
  {
    place: 'steps.json (reading it)',
    act: async ({ state, secret }) => {
      plant(join(state, 'steps.json'), secret);
      return readStateSteps(state);
    },
    outcome: 'refused',
  },
  {
    place: 'steps.json (writing it)',
    act: async ({ state, secret }) => {
      plant(join(state, 'steps.json'), secret);
      await writeStateSteps(state, [{ name: 'people', entity: 'party' }]);
    },
    outcome: 'replaced',
    link: ({ state }) => join(state, 'steps.json'),
  },
  {
    place: 'rollbacks.json',
    act: async ({ state, secret }) => {
      plant(join(state, 'rollbacks.json'), secret);
      return readRollbacks(state);
    },
    outcome: 'refused',
  },
  {
    place: 'the lock',
    act: async ({ state, secret }) => {
      plant(join(state, 'lock'), secret);
      return StateDir.open({ dir: state, account, users: noUsers });
    },
    outcome: 'refused',
  },
  {
    place: 'the spool folder (opening the state)',
    act: async ({ state, outside }) => {
      plant(join(state, 'spool'), outside);
      return StateDir.open({ dir: state, account, users: noUsers });
    },
    outcome: 'refused',
  },
  {
    place: 'the spool folder (opening a spool)',
    act: async ({ state, outside }) => {
      plant(join(state, 'spool'), outside);
      return V1Spool.open(v1SpoolBase(join(state, 'spool'), KEY), KEY);
    },
    outcome: 'refused',
  },
  {
    place: "a spool's records",
    act: async ({ state, secret }) => {
      const base = v1SpoolBase(join(state, 'spool'), KEY);
      plant(`${base}.jsonl`, secret);
      return V1Spool.open(base, KEY);
    },
    outcome: 'refused',
  },
  {
    place: "a spool's cursor",
    act: async ({ state, secret }) => {
      const base = v1SpoolBase(join(state, 'spool'), KEY);
      plant(`${base}.cursor.json`, secret);
      return V1Spool.open(base, KEY);
    },
    outcome: 'refused',
  },
];

/** The commands that bind a state, with a journal linked elsewhere: refused before any request. */
const commandRows: Row[] = [
  {
    place: 'import (run) with the journal linked elsewhere',
    act: async ({ state, secret }) => {
      const dir = dirname(state);
      writeFileSync(join(dir, 'people.csv'), 'id,last\n1,Lovelace\n');
      writeFileSync(
        join(dir, 'people.yaml'),
        'version: 1\nname: people\nentity: party\nkey: "{{id}}"\nfields:\n  - { to: type, value: person }\n  - { to: lastName, value: { column: last } }\n',
      );
      plant(join(state, 'journal', 'people.jsonl'), secret);
      return runImport(
        {
          source: { kind: 'mapping', mappingFile: join(dir, 'people.yaml'), inputFile: join(dir, 'people.csv') },
          stateDir: state,
        },
        { client: sandbox.client, account },
      );
    },
    outcome: 'refused',
  },
  {
    place: 'rollback with the journal linked elsewhere',
    act: async ({ state, secret }) => {
      await writeStateSteps(state, [{ name: 'people', entity: 'party' }]);
      plant(join(state, 'journal', 'people.jsonl'), secret);
      return runRollback({ stateDir: state }, { client: sandbox.client, account });
    },
    outcome: 'refused',
  },
];

describe('untrusted paths: every place that reads or writes a path in a state folder', () => {
  it.each([...stateRows, ...commandRows].map((row) => [row.place, row] as const))(
    '%s: a link planted there',
    async (_place, row) => {
      const p = await place();
      const act = row.act(p);
      const before = readdirSync(p.outside).sort();
      if (row.outcome === 'refused') {
        const error = await refusal(act);
        expect(['PATH_UNSAFE', 'EXPORT_WRITE'], error.message).toContain(error.code);
        if (error.code === 'PATH_UNSAFE') expect(error.hint).toBeTruthy();
      } else {
        await act;
        const link = row.link?.(p) as string;
        expect(lstatSync(link).isSymbolicLink()).toBe(false);
        expect(lstatSync(link).mode & 0o777).toBe(0o600);
      }
      // Nothing outside was written, created or removed.
      expect(readFileSync(p.secret, 'utf8')).toBe(SECRET);
      expect(readdirSync(p.outside).sort()).toEqual(before);
    },
  );
});

describe('untrusted paths: export --attachments DIR', () => {
  let note: { id: number; attachment: number };
  beforeAll(async () => {
    const file = join(work, 'minutes.txt');
    writeFileSync(file, 'the minutes\n');
    const token = await sandbox.client.upload(file, { contentType: 'text/plain' });
    const records = new RecordService(sandbox.client);
    const party = await records.create('party', { type: 'person', firstName: 'Ada', lastName: 'Lovelace' });
    const id = await records.create('entry', {
      type: 'note',
      party: { id: party },
      content: 'Met',
      attachments: [{ token }],
    });
    note = {
      id,
      attachment: ((await records.read('entry', id))?.attachments as Array<{ id: number }>)[0]?.id as number,
    };
  });

  async function exportInto(dir: string): Promise<unknown> {
    mkdirSync(dir, { recursive: true });
    const options = normaliseExportOptions({
      entity: 'entries',
      out: join(dir, 'entries.csv'),
      raw: true,
      mapping: [join(ROOT, 'mappings/roundtrip-entries.yaml')],
      attachments: join(dir, 'files'),
      cwd: dir,
    });
    return runExport(options, {
      client: sandbox.client,
      account: { baseUrl: sandbox.box.url, account: sandbox.box.url },
    });
  }

  it.each([
    [
      "the attachment's id folder",
      (files: string, outside: string) => plant(join(files, String(note.attachment)), outside),
    ],
    [
      "the attachment's file",
      (files: string, _outside: string, secret: string) =>
        plant(join(files, String(note.attachment), 'minutes.txt'), secret),
    ],
    [
      "the attachment's file, linked to a file not there yet",
      (files: string, outside: string) =>
        plant(join(files, String(note.attachment), 'minutes.txt'), join(outside, 'new.txt')),
    ],
  ])('%s linked elsewhere: refused, no byte goes through', async (_name, planting) => {
    cases += 1;
    const dir = join(work, `export-${cases}`);
    const outside = join(work, `export-${cases}-outside`);
    mkdirSync(outside, { recursive: true });
    const secret = join(outside, 'minutes.txt');
    writeFileSync(secret, SECRET);
    planting(join(dir, 'files'), outside, secret);
    const error = await refusal(exportInto(dir));
    expect(error.code).toBe('PATH_UNSAFE');
    expect(error.message).toContain(String(note.attachment));
    expect(readFileSync(secret, 'utf8')).toBe(SECRET);
    expect(readdirSync(outside)).toEqual(['minutes.txt']);
  });

  it('files are made 0600 in 0700 folders, whatever the umask', async () => {
    const umask = process.umask(0);
    try {
      cases += 1;
      const dir = join(work, `export-${cases}`);
      await exportInto(dir);
      const folder = join(dir, 'files', String(note.attachment));
      expect(lstatSync(join(dir, 'files')).mode & 0o777).toBe(0o700);
      expect(lstatSync(folder).mode & 0o777).toBe(0o700);
      expect(lstatSync(join(folder, 'minutes.txt')).mode & 0o777).toBe(0o600);
      expect(lstatSync(join(dir, 'entries.csv')).mode & 0o777).toBe(0o600);
    } finally {
      process.umask(umask);
    }
  });
  it('a name that climbs out (../../) stays a name inside DIR/<id>/', async () => {
    const file = join(work, 'climb.txt');
    writeFileSync(file, 'climbing\n');
    const token = await sandbox.client.upload(file, { contentType: 'text/plain', filename: '../../../escaped.txt' });
    const records = new RecordService(sandbox.client);
    const id = await records.create('entry', {
      type: 'note',
      party: { id: await records.create('party', { type: 'person', lastName: 'Climber' }) },
      content: 'Climb',
      attachments: [{ token }],
    });
    const attachment = ((await records.read('entry', id))?.attachments as Array<{ id: number }>)[0]?.id;
    cases += 1;
    const dir = join(work, `export-${cases}`);
    const outcome = await exportInto(dir).then(
      () => null,
      (e: unknown) => e,
    );
    // Made a plain name (or, with a file-name rule that keeps the slashes, refused): never written outside.
    if (outcome !== null) expect((outcome as FerryError).code).toBe('PATH_UNSAFE');
    else expect(readdirSync(join(dir, 'files', String(attachment)))).toHaveLength(1);
    expect(
      existsSync(join(dir, 'escaped.txt')) ||
        existsSync(join(work, 'escaped.txt')) ||
        existsSync(join(dirname(work), 'escaped.txt')),
    ).toBe(false);
  });
});
