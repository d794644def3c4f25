import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { Transport } from '../../src/client/transport.ts';
import { V1Reader, type V1List, type V1WireFormat } from '../../src/client/v1-reader.ts';
import type { SourceItem } from '../../src/sources/types.ts';
import { readV1Export, type V1ReadOptions } from '../../src/sources/v1/v1-export.ts';
import { readV1Live } from '../../src/sources/v1/v1-live.ts';
import { runCli } from '../helpers/fake-io.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';
import { copyFromCheckout } from '../helpers/checkout-copy.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-v1-live-'));
let box: TestSandbox;

type Record = NonNullable<V1ReadOptions['record']>;

beforeAll(async () => {
  // The source account: the bundled v1 migration of the sample exports, so it holds people,
  // organisations, custom fields, tags, opportunities, cases with history, notes and tasks.
  box = await startTestSandbox();
  copyFromCheckout(['mappings', 'samples'], dir);
  const run = await runCli(['run', 'mappings/plans/v1-migration.yaml'], {
    cwd: dir,
    env: { CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token },
  });
  expect(run.code, run.stdout + run.stderr).toBe(0);
  // In the old account the users had their old names, which the bundled mappings translate.
  for (const user of box.store.users.all()) {
    if (user.username === 'sam') user.username = 'jsmith';
    if (user.username === 'kim') user.username = 'ajones';
  }
});

afterAll(async () => {
  await box.close();
  rmSync(dir, { recursive: true, force: true });
});

const ACCEPT: { [F in V1WireFormat]: string } = { xml: 'application/xml', json: 'application/json' };

async function get(path: string, format: V1WireFormat): Promise<string> {
  const answer = await box.call('GET', path, { headers: { accept: ACCEPT[format] } });
  expect(answer.status, `${path}: ${answer.text}`).toBe(200);
  return answer.text;
}

/** What an export script saves: the list, each record with its sub-lists nested in it. */
async function exportFile(
  list: V1List,
  format: V1WireFormat,
  nested: (kind: string, id: string) => string[],
): Promise<string> {
  const file = join(dir, `${list}-${Math.random().toString(36).slice(2)}.${format}`);
  if (format === 'xml') {
    let text = await get(`/api/${list}`, 'xml');
    const records = [
      ...text.matchAll(/<(person|organisation|opportunity|kase|task)>\s*<id>(\d+)<\/id>[\s\S]*?<\/\1>/g),
    ];
    for (const match of records.reverse()) {
      const [whole, kind = '', id = ''] = match;
      let inner = '';
      for (const path of nested(kind, id)) inner += (await get(path, 'xml')).replace(/^<\?xml[^>]*\?>/, '');
      const spliced = whole.replace(new RegExp(`</${kind}>$`), `${inner}</${kind}>`);
      text = text.slice(0, match.index) + spliced + text.slice((match.index ?? 0) + whole.length);
    }
    writeFileSync(file, text);
  } else {
    type Listed = { [key: string]: unknown; id: string };
    const document = JSON.parse(await get(`/api/${list}`, 'json')) as {
      [key: string]: { [kind: string]: Listed[] | Listed | string };
    };
    for (const group of Object.values(document)) {
      for (const [kind, records] of Object.entries(group)) {
        // A kind's records: a list, or one record given as the object itself (`@size` is text).
        if (typeof records === 'string') continue;
        for (const record of Array.isArray(records) ? records : [records]) {
          for (const path of nested(kind, record.id)) Object.assign(record, JSON.parse(await get(path, 'json')));
        }
      }
    }
    writeFileSync(file, JSON.stringify(document));
  }
  return file;
}

const segment = (kind: string): string => (kind === 'person' || kind === 'organisation' ? 'party' : kind);
const fieldsAndTags = (kind: string, id: string): string[] => {
  const paths = [
    `/api/${kind === 'opportunity' ? 'opportuntity' : segment(kind)}/${id}/customfields`,
    `/api/${segment(kind)}/${id}/tag`,
  ];
  if (kind === 'kase') paths.push(`/api/kase/${id}/party`);
  return paths;
};
const historyOnly = (kind: string, id: string): string[] =>
  kind === 'task' ? [] : [`/api/${segment(kind)}/${id}/history`];

function rowsOf(items: SourceItem[]): Array<{ kind: string; values: unknown; recordKind: string | undefined }> {
  return items.map((item) =>
    item.kind === 'row'
      ? { kind: item.kind, values: item.values, recordKind: item.recordKind }
      : { kind: item.kind, values: item.error.message, recordKind: undefined },
  );
}

async function collect(items: AsyncIterable<SourceItem>): Promise<SourceItem[]> {
  const out: SourceItem[] = [];
  for await (const item of items) out.push(item);
  return out;
}

function reader(format: V1WireFormat): V1Reader {
  return new V1Reader(new Transport({ baseUrl: box.url, auth: box.token }), format);
}

const SAMPLES = join(ROOT, 'samples');
type Values = { [column: string]: unknown };

/** The rows of a bundled sample export, as the file reader gives them. */
async function sampleRows(file: string, record: Record): Promise<Values[]> {
  return (await collect(readV1Export(join(SAMPLES, file), { record }))).flatMap((item) =>
    item.kind === 'row' ? [item.values as Values] : [],
  );
}

/**
 * What the old account holds, counted from the sample exports it was seeded from (the bundled
 * migration plan): a list's records, and the history of its records, nested in their export or
 * saved in history.xml naming its record, and the record of each task completed on it.
 * /api/tasks lists open tasks only.
 */
async function expected(record: Record, list: V1List): Promise<Values[]> {
  const FILES: { [L in V1List]: string } = {
    party: 'v1/parties.xml',
    opportunity: 'v1/opportunities.xml',
    kase: 'v1-migration/kases.xml',
    tasks: 'v1/tasks.xml',
  };
  const rows = await sampleRows(FILES[list], record);
  if (record === 'task') return rows.filter((row) => row['status'] !== 'COMPLETED' && !row['completedDate']);
  if (record !== 'historyItem') return rows;
  const link = { party: 'partyId', opportunity: 'opportunityId', kase: 'caseId', tasks: '' }[list];
  // Completing a task writes a task record into the history of the record it is on.
  const completed = (await sampleRows('v1/tasks.xml', 'task')).filter(
    (row) => row[link] && (row['status'] === 'COMPLETED' || row['completedDate']),
  );
  return [...rows, ...(await sampleRows('v1/history.xml', 'historyItem')).filter((row) => row[link]), ...completed];
}

/**
 * The numbered columns of a kind (`attachment.1.filename`) of each row, sorted: ids are shown as
 * `id` (the old account gave its own), the rest by value.
 */
function itemLists(rows: Values[], item: string): string[] {
  return rows
    .map((row) =>
      JSON.stringify(
        Object.keys(row)
          .filter((column) => column.startsWith(`${item}.`))
          .sort()
          .map((column) => (column.endsWith('.id') ? `${column}=id` : `${column}=${String(row[column])}`)),
      ),
    )
    .sort();
}

const CASES: Array<[Record, V1List, (kind: string, id: string) => string[]]> = [
  ['person', 'party', fieldsAndTags],
  ['organisation', 'party', fieldsAndTags],
  ['opportunity', 'opportunity', fieldsAndTags],
  ['kase', 'kase', fieldsAndTags],
  ['task', 'tasks', () => []],
  ['historyItem', 'party', historyOnly],
  ['historyItem', 'opportunity', historyOnly],
  ['historyItem', 'kase', historyOnly],
];

describe('a live v1 account read as its export files', () => {
  for (const format of ['xml', 'json'] as const) {
    it.each(CASES)(`${format}: %s from /api/%s gives the rows of the export`, async (record, list, nested) => {
      const file = await exportFile(list, format, nested);
      const fromFile = rowsOf(await collect(readV1Export(file, { record })));
      const live = reader(format);
      // A page size of 1 makes every list take several pages.
      const fromLive = rowsOf(await collect(readV1Live(live, { record, list, pageSize: 1 })));
      const samples = await expected(record, list);
      expect(fromLive.filter((row) => row.kind === 'row')).toHaveLength(samples.length);
      // A JSON answer groups a party list by kind (people, then organisations): one page of a
      // whole list and pages of one record order them differently, with the same rows.
      const ordered = (rows: typeof fromLive) =>
        format === 'json' ? [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))) : rows;
      expect(ordered(fromLive)).toEqual(ordered(fromFile));
      const liveValues = fromLive.map((row) => row.values as Values);
      // History items keep their attachments (id, file name, content type), as the samples list them.
      if (record === 'historyItem')
        expect(itemLists(liveValues, 'attachment')).toEqual(itemLists(samples, 'attachment'));
      // A case's additional contacts, one `party.<n>.id` each, as in the case export.
      if (record === 'kase') expect(itemLists(liveValues, 'party')).toEqual(itemLists(samples, 'party'));
    });
  }

  it('carries custom fields, tags and history values the lists alone do not have', async () => {
    const people = rowsOf(await collect(readV1Live(reader('json'), { record: 'person' })));
    expect(people.find((row) => (row.values as { firstName?: unknown }).firstName === 'Ada')?.values).toMatchObject({
      firstName: 'Ada',
      'customField.Industry': 'Software',
      tags: expect.stringContaining('VIP'),
    });
    const notes = rowsOf(await collect(readV1Live(reader('xml'), { record: 'historyItem' })));
    // The history of the parties: nested in the party export, or saved on its own naming the party.
    const kindOf = new Map(
      (await collect(readV1Export(join(SAMPLES, 'v1/parties.xml'), { record: 'party' }))).flatMap((item) =>
        item.kind === 'row' ? [[String(item.values['id']), item.recordKind]] : [],
      ),
    );
    const kinds = (await expected('historyItem', 'party')).map(
      (row) => row['parent.type'] ?? kindOf.get(String(row['partyId'])),
    );
    expect(notes.map((row) => (row.values as Values)['parent.type']).sort()).toEqual(kinds.sort());
    expect(new Set(kinds)).toEqual(new Set(['person', 'organisation']));
  });

  it('reads XML and JSON alike', async () => {
    for (const record of ['party', 'opportunity', 'kase', 'task'] as const) {
      const xml = rowsOf(await collect(readV1Live(reader('xml'), { record })));
      const json = rowsOf(await collect(readV1Live(reader('json'), { record })));
      const byId = (rows: typeof xml) =>
        [...rows].sort((a, b) =>
          String((a.values as { id: string }).id).localeCompare(String((b.values as { id: string }).id)),
        );
      expect(byId(json)).toEqual(byId(xml));
    }
  });

  it('goes on from a page and reads only what changed since a moment', async () => {
    const pages: number[] = [];
    const all = await collect(
      readV1Live(reader('xml'), { record: 'party', pageSize: 2, onPage: (next) => void pages.push(next) }),
    );
    expect(pages).toEqual([2, 3]);
    const rest = await collect(readV1Live(reader('xml'), { record: 'party', pageSize: 2, startAt: 2 }));
    expect(rowsOf(rest)).toEqual(rowsOf(all).slice(2));
    const later = await collect(readV1Live(reader('xml'), { record: 'party', since: new Date(Date.now() + 60_000) }));
    expect(later).toEqual([]);
    const earlier = await collect(
      readV1Live(reader('xml'), { record: 'party', since: new Date('2000-01-01T00:00:00Z') }),
    );
    expect(earlier).toHaveLength(3);
  });
});

describe('the v1 migration plan with the live account as its input', () => {
  it('writes the old account into a second sandbox, and a second run changes nothing', async () => {
    const target = await startTestSandbox();
    const work = mkdtempSync(join(tmpdir(), 'ferry-v1-live-plan-'));
    try {
      // The bundled plan, each input swapped for the live account's list: cases and their history
      // from /api/kase, opportunities and theirs from /api/opportunity, the rest from /api/party
      // and /api/tasks. The history saved on its own (history.xml) has no list of its own in v1:
      // its items are in the history of the records they name, which the notes steps read, so a
      // consultant leaves that step out rather than read them twice.
      const plan = parseYaml(readFileSync(join(ROOT, 'mappings/plans/v1-migration.yaml'), 'utf8')) as {
        steps: Array<{ name: string; mapping: string; input: string }>;
      };
      const lists: { [file: string]: string } = {
        'v1-migration/kases.xml': '/api/kase',
        'v1/opportunities.xml': '/api/opportunity',
        'v1/parties.xml': '',
        'v1/tasks.xml': '',
      };
      plan.steps = plan.steps.filter((step) => !step.input.endsWith('/history.xml'));
      for (const step of plan.steps) {
        const list = lists[step.input.replace('../../samples/', '')];
        expect(list, step.input).toBeDefined();
        step.input = `v1+${box.url}${list}`;
        step.mapping = join(ROOT, 'mappings', step.mapping.replace('../', ''));
      }
      writeFileSync(join(work, 'plan.yaml'), stringifyYaml(plan));
      const env = { CRM_FERRY_BASE_URL: target.url, CRM_FERRY_TOKEN: target.token, CRM_FERRY_V1_TOKEN: box.token };
      const first = await runCli(['run', 'plan.yaml', '--v1-format', 'json', '--json'], { cwd: work, env });
      expect(first.code, first.stdout + first.stderr).toBe(0);
      // The set-up comes first: the activity types the history needs, which the new account lacks.
      const events = (output: string) =>
        output
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as { type: string; plan?: { create: Array<{ name: string }> } });
      const setup = events(first.stdout)[0];
      expect(setup?.type).toBe('setup');
      expect(setup?.plan?.create.map((item) => item.name)).toEqual(['Email', 'Task completed']);
      // The v1 interface has no attachment download: each file of the history is named in a
      // NOT_CARRIED warning on its note, which is written without it.
      const rowEvents = events(first.stdout) as Array<{
        type: string;
        action?: string;
        warnings?: Array<{ code: string; field: string; message: string; value: string }>;
      }>;
      const notCarried = rowEvents
        .flatMap((event) => (event.type === 'row' ? (event.warnings ?? []) : []))
        .filter((w) => w.code === 'NOT_CARRIED' && w.field === 'attachment');
      const files: string[] = [];
      for (const list of ['party', 'opportunity', 'kase'] as const)
        for (const row of await expected('historyItem', list))
          for (const [column, value] of Object.entries(row))
            if (/^attachment\.\d+\.filename$/.test(column)) files.push(String(value));
      expect(files.length).toBeGreaterThan(0);
      expect(notCarried.map((w) => w.value).sort()).toEqual(files.sort());
      for (const warning of notCarried)
        expect(warning.message).toMatch(/the legacy v1 interface offers no download of attachments/);
      const count = async (sandbox: TestSandbox, path: string, key: string): Promise<number> => {
        const answer = await sandbox.v2('GET', `${path}${path.includes('?') ? '&' : '?'}perPage=100`);
        return (answer.body[key] as unknown[]).length;
      };
      for (const [path, key] of [
        ['/parties', 'parties'],
        ['/opportunities', 'opportunities'],
        ['/kases', 'kases'],
        ['/entries', 'entries'],
      ] as const) {
        expect(await count(target, path, key), path).toBe(await count(box, path, key));
      }
      // Each history item once: no two entries with the same text on the same record.
      const entries = (await target.v2('GET', '/entries?perPage=100')).body.entries as Array<{
        content: string;
        party?: { id: number };
        kase?: { id: number };
        opportunity?: { id: number };
      }>;
      const seen = entries.map((entry) =>
        JSON.stringify([entry.party?.id, entry.kase?.id, entry.opportunity?.id, entry.content]),
      );
      expect(new Set(seen).size).toBe(entries.length);
      // /api/tasks lists the open tasks only: a completed task is not in the live list (its
      // completion record is, in the history of its record).
      expect(await count(target, '/tasks?status=open,completed', 'tasks')).toBe(
        await count(box, '/tasks?status=open', 'tasks'),
      );
      expect(await count(target, '/tasks?status=completed', 'tasks')).toBe(0);
      expect(await count(target, '/parties', 'parties')).toBe(3);
      const verified = await runCli(['verify', 'plan.yaml', '--v1-format', 'json'], { cwd: work, env });
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
      expect(verified.stdout).toContain(
        'No difference: 21 of 21 rows are in the account as in the file; 4 values were left out of the records written',
      );
      const second = await runCli(['run', 'plan.yaml', '--json'], { cwd: work, env });
      expect(second.code, second.stdout + second.stderr).toBe(0);
      const end = JSON.parse(second.stdout.trim().split('\n').at(-1) as string);
      const steps = end.summary.steps as Array<{ step: string; created: number; updated: number; unchanged: number }>;
      expect(steps.map((s) => [s.step, s.created, s.updated])).toEqual(steps.map((s) => [s.step, 0, 0]));
      expect(steps.reduce((sum, s) => sum + s.unchanged, 0)).toBeGreaterThan(10);

      // A delta sync: the old account's records are old, then one person changes there.
      for (const table of [box.store.parties, box.store.opportunities, box.store.kases])
        for (const record of table.all()) record.updatedAt = '2020-01-01T00:00:00.000Z';
      const alan = (await box.v2('GET', '/parties?perPage=100')).body.parties.find(
        (p: { firstName?: string }) => p.firstName === 'Alan',
      );
      expect((await box.v2('PUT', `/parties/${alan.id}`, { party: { jobTitle: 'Cryptanalyst' } })).status).toBe(200);
      const delta = await runCli(['run', 'plan.yaml', '--json', '--since', '2021-01-01'], { cwd: work, env });
      expect(delta.code, delta.stdout + delta.stderr).toBe(0);
      const deltaSteps = JSON.parse(delta.stdout.trim().split('\n').at(-1) as string).summary.steps as Array<{
        step: string;
        rowsRead: number;
        updated: number;
        missing: number;
      }>;
      expect(deltaSteps.map((s) => [s.step, s.rowsRead, s.updated, s.missing])).toEqual([
        ['organisations', 0, 0, 0],
        ['people', 1, 1, 0],
        ['opportunities', 0, 0, 0],
        ['kases', 0, 0, 0],
        ['notes', 0, 0, 0],
        ['kase-notes', 0, 0, 0],
        ['opportunity-notes', 0, 0, 0],
        // The v1 task list has no lastmodified filter: read whole, and unchanged.
        ['tasks', 3, 0, 0],
      ]);
      const copied = (await target.v2('GET', '/parties?perPage=100')).body.parties.find(
        (p: { firstName?: string }) => p.firstName === 'Alan',
      );
      expect(copied.jobTitle).toBe('Cryptanalyst');
      const refused = await runCli(['run', 'plan.yaml', '--since', '2021-01-01', '--delete-missing'], {
        cwd: work,
        env,
      });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/--delete-missing does not go with --since/);
    } finally {
      await target.close();
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('refuses a live input over plain http to another machine, and one without a token, before reading', async () => {
    const work = mkdtempSync(join(tmpdir(), 'ferry-v1-live-refuse-'));
    const target = await startTestSandbox();
    try {
      const env = { CRM_FERRY_BASE_URL: target.url, CRM_FERRY_TOKEN: target.token };
      const mapping = join(ROOT, 'mappings/v1-organisations.yaml');
      const noToken = await runCli(
        ['import', '--mapping', mapping, '--input', `v1+${box.url}`, '--state-dir', join(work, 's1')],
        { cwd: work, env },
      );
      expect(noToken.code).toBe(2);
      expect(noToken.stderr).toMatch(/no token for it was given/);
      // Said before the run began: no state was made.
      expect(existsSync(join(work, 's1'))).toBe(false);
      const clear = await runCli(
        ['import', '--mapping', mapping, '--input', 'v1+http://old.example.com', '--state-dir', join(work, 's2')],
        { cwd: work, env: { ...env, CRM_FERRY_V1_TOKEN: 'secret-token-1' } },
      );
      expect(clear.code).toBe(2);
      expect(clear.stderr).toMatch(/refusing to send credentials over http:/);
      expect(existsSync(join(work, 's2'))).toBe(false);
      expect(clear.stderr + clear.stdout).not.toContain('secret-token-1');
      const inspect = await runCli(['inspect', `v1+${box.url}`], { cwd: work, env });
      expect(inspect.code).toBe(2);
      expect(inspect.stderr).toMatch(/inspect reads files; a live v1 account is read by import, run and verify/);
      const validate = await runCli(['validate', '--mapping', mapping, '--input', `v1+${box.url}`], { cwd: work, env });
      expect(validate.code).toBe(2);
      expect(validate.stderr).toMatch(/is a live v1 source, which only import, run and verify read/);
      const dry = await runCli(
        ['import', '--mapping', mapping, '--input', `v1+${box.url}`, '--dry-run', '--state-dir', join(work, 's3')],
        { cwd: work, env: { ...env, CRM_FERRY_V1_TOKEN: box.token } },
      );
      expect(dry.code, dry.stdout + dry.stderr).toBe(0);
      expect(dry.stdout).toMatch(/1 request|Dry run/i);
    } finally {
      await target.close();
      rmSync(work, { recursive: true, force: true });
    }
  });
});

describe('a mapping whose source is the live account', () => {
  it('reads source: {format: v1-api, baseUrl} with no input in the plan step, and refuses a file given as its input', async () => {
    const target = await startTestSandbox();
    const work = mkdtempSync(join(tmpdir(), 'ferry-v1-live-source-'));
    try {
      const mapping = readFileSync(join(ROOT, 'mappings/v1-organisations.yaml'), 'utf8').replace(
        /^source:\n/m,
        `source:\n  format: v1-api\n  baseUrl: ${box.url}\n  wireFormat: json\n  pageSize: 1\n`,
      );
      expect(mapping).toContain('format: v1-api');
      writeFileSync(join(work, 'organisations.yaml'), mapping);
      writeFileSync(
        join(work, 'plan.yaml'),
        'version: 1\nsteps:\n  - name: organisations\n    mapping: organisations.yaml\n',
      );
      const env = { CRM_FERRY_BASE_URL: target.url, CRM_FERRY_TOKEN: target.token, CRM_FERRY_V1_TOKEN: box.token };
      const run = await runCli(['run', 'plan.yaml'], { cwd: work, env });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const organisations = (await target.v2('GET', '/parties?perPage=100')).body.parties.filter(
        (p: { type: string }) => p.type === 'organisation',
      );
      expect(organisations.map((p: { name: string }) => p.name)).toEqual(['Analytical Engines & Co']);
      writeFileSync(
        join(work, 'file-plan.yaml'),
        'version: 1\nsteps:\n  - name: organisations\n    mapping: organisations.yaml\n    input: organisations.yaml\n',
      );
      const refused = await runCli(['run', 'file-plan.yaml'], { cwd: work, env });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        /step organisations reads a live v1 account \(source format v1-api\), but its input is the file/,
      );
    } finally {
      await target.close();
      rmSync(work, { recursive: true, force: true });
    }
  });
});

describe('records that change while the old account is read', () => {
  it('leaves out, with a warning, a record deleted after its page was read', async () => {
    const own = await startTestSandbox();
    try {
      const ids: number[] = [];
      for (const name of ['Kept Ltd', 'Gone Ltd']) {
        const created = await own.v2('POST', '/parties', { party: { type: 'organisation', name } });
        expect(created.status).toBe(201);
        ids.push(created.body.party.id);
      }
      let deleted = false;
      class DeletingReader extends V1Reader {
        override async get(
          path: string,
          query: { [key: string]: string | number | undefined } = {},
          signal?: AbortSignal,
        ) {
          const page = await super.get(path, query, signal);
          if (path === '/api/party' && !deleted) {
            deleted = true;
            expect((await own.v2('DELETE', `/parties/${ids[1]}`)).status).toBe(204);
          }
          return page;
        }
      }
      const warnings: string[] = [];
      const rows = await collect(
        readV1Live(new DeletingReader(new Transport({ baseUrl: own.url, auth: own.token }), 'xml'), {
          record: 'organisation',
          onWarning: (w) => void warnings.push(w.message),
        }),
      );
      expect(
        rows
          .map((row) => (row.kind === 'row' ? row.values['name'] : null))
          .filter((name) => name === 'Kept Ltd' || name === 'Gone Ltd'),
      ).toEqual(['Kept Ltd']);
      expect(warnings).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^organisation ${ids[1]} was deleted from the old account while v1\\+http://127\\.0\\.0\\.1:\\d+/api/party was read`,
          ),
        ),
      );
    } finally {
      await own.close();
    }
  });
});
