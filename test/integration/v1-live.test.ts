import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Transport } from '../../src/client/transport.ts';
import { V1Reader, type V1List, type V1WireFormat } from '../../src/client/v1-reader.ts';
import type { SourceItem } from '../../src/sources/types.ts';
import { readV1Export, type V1ReadOptions } from '../../src/sources/v1-export.ts';
import { readV1Live } from '../../src/sources/v1-live.ts';
import { runCli } from '../helpers/fake-io.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-v1-live-'));
let box: TestSandbox;

type Record = NonNullable<V1ReadOptions['record']>;

beforeAll(async () => {
  // The source account: the bundled v1 migration of the sample exports, so it holds people,
  // organisations, custom fields, tags, opportunities, cases with history, notes and tasks.
  box = await startTestSandbox();
  cpSync(join(ROOT, 'mappings'), join(dir, 'mappings'), { recursive: true });
  cpSync(join(ROOT, 'samples'), join(dir, 'samples'), { recursive: true });
  const run = await runCli(['run', 'mappings/plans/v1-migration.yaml'], { cwd: dir, env: { CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token } });
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
async function exportFile(list: V1List, format: V1WireFormat, nested: (kind: string, id: string) => string[]): Promise<string> {
  const file = join(dir, `${list}-${Math.random().toString(36).slice(2)}.${format}`);
  if (format === 'xml') {
    let text = await get(`/api/${list}`, 'xml');
    const records = [...text.matchAll(/<(person|organisation|opportunity|kase|task)>\s*<id>(\d+)<\/id>[\s\S]*?<\/\1>/g)];
    for (const match of records.reverse()) {
      const [whole, kind = '', id = ''] = match;
      let inner = '';
      for (const path of nested(kind, id)) inner += (await get(path, 'xml')).replace(/^<\?xml[^>]*\?>/, '');
      const spliced = whole.replace(new RegExp(`</${kind}>$`), `${inner}</${kind}>`);
      text = text.slice(0, match.index) + spliced + text.slice((match.index ?? 0) + whole.length);
    }
    writeFileSync(file, text);
  } else {
    const document = JSON.parse(await get(`/api/${list}`, 'json')) as { [key: string]: { [kind: string]: Array<{ [key: string]: unknown; id: string }> } };
    for (const group of Object.values(document)) {
      for (const [kind, records] of Object.entries(group)) {
        if (!Array.isArray(records)) continue;
        for (const record of records) {
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
  const paths = [`/api/${kind === 'opportunity' ? 'opportuntity' : segment(kind)}/${id}/customfields`, `/api/${segment(kind)}/${id}/tag`];
  if (kind === 'kase') paths.push(`/api/kase/${id}/party`);
  return paths;
};
const historyOnly = (kind: string, id: string): string[] => (kind === 'task' ? [] : [`/api/${segment(kind)}/${id}/history`]);

function rowsOf(items: SourceItem[]): Array<{ kind: string; values: unknown; recordKind: string | undefined }> {
  return items.map((item) => (item.kind === 'row' ? { kind: item.kind, values: item.values, recordKind: item.recordKind } : { kind: item.kind, values: item.error.message, recordKind: undefined }));
}

async function collect(items: AsyncIterable<SourceItem>): Promise<SourceItem[]> {
  const out: SourceItem[] = [];
  for await (const item of items) out.push(item);
  return out;
}

function reader(format: V1WireFormat): V1Reader {
  return new V1Reader(new Transport({ baseUrl: box.url, auth: box.token }), format);
}

const CASES: Array<[Record, V1List, (kind: string, id: string) => string[], number]> = [
  ['person', 'party', fieldsAndTags, 2],
  ['organisation', 'party', fieldsAndTags, 1],
  ['opportunity', 'opportunity', fieldsAndTags, 2],
  ['kase', 'kase', fieldsAndTags, 2],
  ['task', 'tasks', () => [], 3],
  ['historyItem', 'party', historyOnly, 2],
  ['historyItem', 'kase', historyOnly, 2],
];

describe('a live v1 account read as its export files', () => {
  for (const format of ['xml', 'json'] as const) {
    it.each(CASES)(`${format}: %s from /api/%s gives the rows of the export`, async (record, list, nested, count) => {
      const file = await exportFile(list, format, nested);
      const fromFile = rowsOf(await collect(readV1Export(file, { record })));
      const live = reader(format);
      // A page size of 1 makes every list take several pages.
      const fromLive = rowsOf(await collect(readV1Live(live, { record, list, pageSize: 1 })));
      expect(fromLive.filter((row) => row.kind === 'row')).toHaveLength(count);
      expect(fromLive).toEqual(fromFile);
    });
  }

  it('carries custom fields, tags and history values the lists alone do not have', async () => {
    const people = rowsOf(await collect(readV1Live(reader('json'), { record: 'person' })));
    expect(people.find((row) => (row.values as { firstName?: unknown }).firstName === 'Ada')?.values).toMatchObject({ firstName: 'Ada', 'customField.Industry': 'Software', tags: expect.stringContaining('VIP') });
    const notes = rowsOf(await collect(readV1Live(reader('xml'), { record: 'historyItem' })));
    expect(notes.map((row) => (row.values as { [key: string]: unknown })['parent.type'])).toEqual(['person', 'person']);
  });

  it('reads XML and JSON alike', async () => {
    for (const record of ['party', 'opportunity', 'kase', 'task'] as const) {
      const xml = rowsOf(await collect(readV1Live(reader('xml'), { record })));
      const json = rowsOf(await collect(readV1Live(reader('json'), { record })));
      const byId = (rows: typeof xml) => [...rows].sort((a, b) => String((a.values as { id: string }).id).localeCompare(String((b.values as { id: string }).id)));
      expect(byId(json)).toEqual(byId(xml));
    }
  });

  it('goes on from a page and reads only what changed since a moment', async () => {
    const pages: number[] = [];
    const all = await collect(readV1Live(reader('xml'), { record: 'party', pageSize: 2, onPage: (next) => void pages.push(next) }));
    expect(pages).toEqual([2, 3]);
    const rest = await collect(readV1Live(reader('xml'), { record: 'party', pageSize: 2, startAt: 2 }));
    expect(rowsOf(rest)).toEqual(rowsOf(all).slice(2));
    const later = await collect(readV1Live(reader('xml'), { record: 'party', since: new Date(Date.now() + 60_000) }));
    expect(later).toEqual([]);
    const earlier = await collect(readV1Live(reader('xml'), { record: 'party', since: new Date('2000-01-01T00:00:00Z') }));
    expect(earlier).toHaveLength(3);
  });
});

describe('the v1 migration plan with the live account as its input', () => {
  it('writes the old account into a second sandbox, and a second run changes nothing', async () => {
    const target = await startTestSandbox();
    const work = mkdtempSync(join(tmpdir(), 'ferry-v1-live-plan-'));
    try {
      // The bundled plan, each input swapped for the live account (cases and their history from /api/kase).
      const plan = (await import('node:fs')).readFileSync(join(ROOT, 'mappings/plans/v1-migration.yaml'), 'utf8');
      const live = plan
        .replace(/input: \.\.\/\.\.\/samples\/v1-migration\/kases\.xml/g, `input: v1+${box.url}/api/kase`)
        .replace(/input: \.\.\/\.\.\/samples\/v1\/\S+/g, `input: v1+${box.url}`)
        .replace(/mapping: \.\.\//g, `mapping: ${join(ROOT, 'mappings')}/`);
      expect(live).not.toMatch(/input: .*samples/);
      writeFileSync(join(work, 'plan.yaml'), live);
      const env = { CRM_FERRY_BASE_URL: target.url, CRM_FERRY_TOKEN: target.token, CRM_FERRY_V1_TOKEN: box.token };
      const first = await runCli(['run', 'plan.yaml', '--v1-format', 'json', '--json'], { cwd: work, env });
      expect(first.code, first.stdout + first.stderr).toBe(0);
      const count = async (sandbox: TestSandbox, path: string, key: string): Promise<number> => {
        const answer = await sandbox.v2('GET', `${path}${path.includes('?') ? '&' : '?'}perPage=100`);
        return (answer.body[key] as unknown[]).length;
      };
      for (const [path, key] of [['/parties', 'parties'], ['/opportunities', 'opportunities'], ['/kases', 'kases'], ['/entries', 'entries'], ['/tasks?status=open,completed', 'tasks']] as const) {
        expect(await count(target, path, key), path).toBe(await count(box, path, key));
      }
      expect(await count(target, '/parties', 'parties')).toBe(3);
      const verified = await runCli(['verify', 'plan.yaml', '--v1-format', 'json'], { cwd: work, env });
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
      expect(verified.stdout).toContain('The account holds what the source holds.');
      const second = await runCli(['run', 'plan.yaml', '--json'], { cwd: work, env });
      expect(second.code, second.stdout + second.stderr).toBe(0);
      const end = JSON.parse(second.stdout.trim().split('\n').at(-1) as string);
      const steps = end.summary.steps as Array<{ step: string; created: number; updated: number; unchanged: number }>;
      expect(steps.map((s) => [s.step, s.created, s.updated])).toEqual(steps.map((s) => [s.step, 0, 0]));
      expect(steps.reduce((sum, s) => sum + s.unchanged, 0)).toBeGreaterThan(10);

      // A delta sync: the old account's records are old, then one person changes there.
      for (const table of [box.store.parties, box.store.opportunities, box.store.kases]) for (const record of table.all()) record.updatedAt = '2020-01-01T00:00:00.000Z';
      const alan = (await box.v2('GET', '/parties?perPage=100')).body.parties.find((p: { firstName?: string }) => p.firstName === 'Alan');
      expect((await box.v2('PUT', `/parties/${alan.id}`, { party: { jobTitle: 'Cryptanalyst' } })).status).toBe(200);
      const delta = await runCli(['run', 'plan.yaml', '--json', '--since', '2021-01-01'], { cwd: work, env });
      expect(delta.code, delta.stdout + delta.stderr).toBe(0);
      const deltaSteps = JSON.parse(delta.stdout.trim().split('\n').at(-1) as string).summary.steps as Array<{ step: string; rowsRead: number; updated: number; missing: number }>;
      expect(deltaSteps.map((s) => [s.step, s.rowsRead, s.updated, s.missing])).toEqual([
        ['organisations', 0, 0, 0],
        ['people', 1, 1, 0],
        ['opportunities', 0, 0, 0],
        ['kases', 0, 0, 0],
        ['notes', 0, 0, 0],
        ['kase-notes', 0, 0, 0],
        // The v1 task list has no lastmodified filter: read whole, and unchanged.
        ['tasks', 3, 0, 0],
      ]);
      const copied = (await target.v2('GET', '/parties?perPage=100')).body.parties.find((p: { firstName?: string }) => p.firstName === 'Alan');
      expect(copied.jobTitle).toBe('Cryptanalyst');
      const refused = await runCli(['run', 'plan.yaml', '--since', '2021-01-01', '--delete-missing'], { cwd: work, env });
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
      const noToken = await runCli(['import', '--mapping', mapping, '--input', `v1+${box.url}`, '--state-dir', join(work, 's1')], { cwd: work, env });
      expect(noToken.code).toBe(2);
      expect(noToken.stderr).toMatch(/no token for it was given/);
      // Said before the run began: no state was made.
      expect(existsSync(join(work, 's1'))).toBe(false);
      const clear = await runCli(['import', '--mapping', mapping, '--input', 'v1+http://old.example.com', '--state-dir', join(work, 's2')], { cwd: work, env: { ...env, CRM_FERRY_V1_TOKEN: 'secret-token-1' } });
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
      const dry = await runCli(['import', '--mapping', mapping, '--input', `v1+${box.url}`, '--dry-run', '--state-dir', join(work, 's3')], { cwd: work, env: { ...env, CRM_FERRY_V1_TOKEN: box.token } });
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
      const { readFileSync } = await import('node:fs');
      const mapping = readFileSync(join(ROOT, 'mappings/v1-organisations.yaml'), 'utf8').replace(/^source:\n/m, `source:\n  format: v1-api\n  baseUrl: ${box.url}\n  wireFormat: json\n  pageSize: 1\n`);
      expect(mapping).toContain('format: v1-api');
      writeFileSync(join(work, 'organisations.yaml'), mapping);
      writeFileSync(join(work, 'plan.yaml'), 'version: 1\nsteps:\n  - name: organisations\n    mapping: organisations.yaml\n');
      const env = { CRM_FERRY_BASE_URL: target.url, CRM_FERRY_TOKEN: target.token, CRM_FERRY_V1_TOKEN: box.token };
      const run = await runCli(['run', 'plan.yaml'], { cwd: work, env });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const organisations = (await target.v2('GET', '/parties?perPage=100')).body.parties.filter((p: { type: string }) => p.type === 'organisation');
      expect(organisations.map((p: { name: string }) => p.name)).toEqual(['Analytical Engines & Co']);
      writeFileSync(join(work, 'file-plan.yaml'), 'version: 1\nsteps:\n  - name: organisations\n    mapping: organisations.yaml\n    input: organisations.yaml\n');
      const refused = await runCli(['run', 'file-plan.yaml'], { cwd: work, env });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/step organisations reads a live v1 account \(source format v1-api\), but its input is the file/);
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
        override async get(path: string, query: { [key: string]: string | number | undefined } = {}, signal?: AbortSignal) {
          const page = await super.get(path, query, signal);
          if (path === '/api/party' && !deleted) {
            deleted = true;
            expect((await own.v2('DELETE', `/parties/${ids[1]}`)).status).toBe(204);
          }
          return page;
        }
      }
      const warnings: string[] = [];
      const rows = await collect(readV1Live(new DeletingReader(new Transport({ baseUrl: own.url, auth: own.token }), 'xml'), { record: 'organisation', onWarning: (w) => void warnings.push(w.message) }));
      expect(rows.map((row) => (row.kind === 'row' ? row.values['name'] : null)).filter((name) => name === 'Kept Ltd' || name === 'Gone Ltd')).toEqual(['Kept Ltd']);
      expect(warnings).toContainEqual(expect.stringMatching(new RegExp(`^organisation ${ids[1]} was deleted from the old account while v1\\+http://127\\.0\\.0\\.1:\\d+/api/party was read`)));
    } finally {
      await own.close();
    }
  });
});
