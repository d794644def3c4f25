// A live v1 read spools what it fetched in the run's state folder: a run killed in the middle of a
// list goes on from the recorded page, a plan with `setup:` reads each list once, and a finished
// run drops the spool so that the next (a delta sync) reads the account again.
import { spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { v1LiveConnection } from '../../src/client/index.ts';
import { compileMapping } from '../../src/mapping/index.ts';
import { connectLiveSteps, countStepItems, openStepItems, prepareSingleStep } from '../../src/plan/index.ts';
import { runCli } from '../helpers/fake-io.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = join(ROOT, 'bin/crm-ferry.js');
const ORGANISATIONS = 40;
const PEOPLE = 8;
const PAGE = 4;

let a: TestSandbox;
/** Every request the old account got, as path and query. */
let requests: string[] = [];
/** Called for each request to the old account, before it is answered. */
let onRequest: (url: string) => void = () => undefined;

beforeAll(async () => {
  a = await startTestSandbox();
  const ids: number[] = [];
  for (let i = 1; i <= ORGANISATIONS; i++) {
    const created = await a.v2('POST', '/parties', {
      party: { type: 'organisation', name: `Org ${String(i).padStart(2, '0')}` },
    });
    expect(created.status).toBe(201);
    ids.push(created.body.party.id);
  }
  for (let i = 1; i <= PEOPLE; i++) {
    const created = await a.v2('POST', '/parties', {
      party: { type: 'person', firstName: 'Person', lastName: `No ${i}`, organisation: { id: ids[i] } },
    });
    expect(created.status).toBe(201);
  }
  // Watched beside the sandbox's own handler: seen before the answer is sent.
  a.app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const url = request.url ?? '';
    requests.push(url);
    // Refused for how the token came (Basic, before the transport takes the sandbox's Bearer
    // challenge): a request, but no read of the account.
    response.on('finish', () => {
      const at = response.statusCode === 401 ? requests.lastIndexOf(url) : -1;
      if (at >= 0) requests.splice(at, 1);
    });
    onRequest(url);
  });
});

afterAll(async () => {
  await a.close();
});

let work: string;
let b: TestSandbox;
beforeEach(async () => {
  work = mkdtempSync(join(tmpdir(), 'ferry-v1-spool-'));
  b = await startTestSandbox();
  requests = [];
  onRequest = () => undefined;
});
afterEach(async () => {
  await b.close();
  rmSync(work, { recursive: true, force: true });
});

/** A bundled v1 mapping reading the live account, `PAGE` records a page. */
function liveMapping(name: string): string {
  const file = join(work, `${name}.yaml`);
  const text = readFileSync(join(ROOT, 'mappings', `${name}.yaml`), 'utf8').replace(
    /^source:\n/m,
    `source:\n  format: v1-api\n  baseUrl: ${a.url}\n  pageSize: ${PAGE}\n`,
  );
  expect(text).toContain('format: v1-api');
  writeFileSync(file, text);
  return file;
}

const env = (): NodeJS.ProcessEnv => ({
  CRM_FERRY_BASE_URL: b.url,
  CRM_FERRY_TOKEN: b.token,
  CRM_FERRY_V1_TOKEN: a.token,
});

/** The `start` of each page of the party list asked for, in order. */
const listStarts = (): number[] =>
  requests
    .filter((url) => url.startsWith('/api/party?'))
    .map((url) => Number(new URL(url, a.url).searchParams.get('start')));

/** The cursor of the one spool of the party list in the state folder (the steps reading it share it). */
function cursorOf(stateDir: string): { next: number; bytes: number; done: boolean } {
  const cursors = spoolFiles(stateDir).filter((name) => name.startsWith('party-') && name.endsWith('.cursor.json'));
  expect(cursors).toHaveLength(1);
  return JSON.parse(readFileSync(join(stateDir, 'spool', cursors[0] as string), 'utf8'));
}
const spoolFiles = (stateDir: string): string[] =>
  existsSync(join(stateDir, 'spool')) ? readdirSync(join(stateDir, 'spool')).filter((name) => name !== 'dry-run') : [];

/** Runs the command line in a child process, killed (SIGKILL) as the party list's sixth page is asked for; the signal it ended by. */
async function killedAtSixthPage(args: string[]): Promise<string | null> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: work,
    env: { ...process.env, ...env() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ended = new Promise<string | null>((done) => child.on('close', (_code, signal) => done(signal)));
  onRequest = (url) => {
    if (url.startsWith('/api/party?') && listStarts().length === 6) child.kill('SIGKILL');
  };
  try {
    return await ended;
  } finally {
    onRequest = () => undefined;
  }
}

async function organisationsIn(box: TestSandbox): Promise<string[]> {
  const answer = await box.v2('GET', '/parties?perPage=100');
  return (answer.body.parties as Array<{ type: string; name?: string }>)
    .filter((p) => p.type === 'organisation')
    .map((p) => p.name as string)
    .sort();
}

const everyOrganisation = Array.from({ length: ORGANISATIONS }, (_, i) => `Org ${String(i + 1).padStart(2, '0')}`);
/** Pages of the party list (people and organisations), the last one short or empty. */
const PAGES = Math.floor((ORGANISATIONS + PEOPLE) / PAGE) + 1;

describe('a live import killed in the middle of a list', () => {
  it('goes on from the page its spool recorded, reading no page before it, and writes each record once', async () => {
    const mapping = liveMapping('v1-organisations');
    const stateDir = join(work, 'state');
    const args = [
      'import',
      '--mapping',
      mapping,
      '--input',
      `v1+${a.url}`,
      '--state-dir',
      stateDir,
      '--concurrency',
      '2',
    ];

    // What a whole read costs: a dry run reads the list and every record's sub-lists.
    const dry = await runCli([...args, '--dry-run'], { cwd: work, env: env() });
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    const wholeRead = requests.length;
    expect(listStarts()).toEqual(Array.from({ length: PAGES }, (_, i) => i * PAGE));
    // A dry run's spool lives for its run only.
    expect(spoolFiles(stateDir)).toEqual([]);
    requests = [];

    // Killed (SIGKILL) as it asks for the sixth page: five pages are read and recorded.
    expect(await killedAtSixthPage(args)).toBe('SIGKILL');
    const cursor = cursorOf(stateDir);
    expect(cursor).toMatchObject({ next: 5 * PAGE, done: false });
    const written = (await organisationsIn(b)).length;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(ORGANISATIONS);
    // The spool holds no token.
    for (const name of spoolFiles(stateDir))
      expect(readFileSync(join(stateDir, 'spool', name), 'utf8')).not.toContain(a.token);

    // Resumed: the recorded pages come from the spool, the list goes on live from the next one.
    requests = [];
    const resumed = await runCli([...args, '--json'], { cwd: work, env: env() });
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(listStarts()).toEqual(Array.from({ length: PAGES - 5 }, (_, i) => (i + 5) * PAGE));
    expect(Math.min(...listStarts())).toBe(cursor.next);
    expect(requests.length).toBeLessThan(wholeRead);
    // The records of the recorded pages cost no request: only the pages read live had their sub-lists read.
    expect(requests.filter((url) => /\/(customfields|tag)\b/.test(url)).length).toBe(
      2 * (ORGANISATIONS + PEOPLE - 5 * PAGE),
    );
    const summary = JSON.parse(resumed.stdout.trim().split('\n').at(-1) as string).summary.steps[0];
    expect(summary.rowsRead).toBe(ORGANISATIONS);
    expect(summary.missing).toBe(0);
    expect(await organisationsIn(b)).toEqual(everyOrganisation);
    // Finished: the spool is gone, and the next run reads the account again.
    expect(spoolFiles(stateDir)).toEqual([]);
  }, 60_000);
});

describe('a live plan with set-up', () => {
  it('reads each list of the old account once per run: the set-up fills the spool the steps share, the run reads it back', async () => {
    const organisations = liveMapping('v1-organisations');
    const people = liveMapping('v1-people');
    writeFileSync(
      join(work, 'plan.yaml'),
      `version: 1\nsetup:\n  activityTypes:\n    - { name: Email, icon: MAIL }\nsteps:\n  - name: organisations\n    mapping: ${organisations}\n  - name: people\n    mapping: ${people}\n`,
    );
    const run = await runCli(['run', 'plan.yaml', '--json'], { cwd: work, env: env() });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string });
    expect(lines[0]?.type).toBe('setup');
    // The two steps share one read of the party list: each page once, each record's sub-lists once.
    expect(listStarts()).toEqual(Array.from({ length: PAGES }, (_, i) => i * PAGE));
    expect(requests.filter((url) => /\/customfields\b/.test(url)).length).toBe(ORGANISATIONS + PEOPLE);
    expect(requests.filter((url) => /\/tag\b/.test(url)).length).toBe(ORGANISATIONS + PEOPLE);
    expect(await organisationsIn(b)).toEqual(everyOrganisation);
    const persons = (
      (await b.v2('GET', '/parties?perPage=100')).body.parties as Array<{ type: string; organisation?: { id: number } }>
    ).filter((p) => p.type === 'person');
    expect(persons).toHaveLength(PEOPLE);
    expect(persons.every((p) => p.organisation?.id !== undefined)).toBe(true);
    expect(spoolFiles(join(work, '.crm-ferry'))).toEqual([]);
  }, 60_000);
});

describe('a live plan without set-up, its steps reading one list side by side', () => {
  it('fetches each page and sub-list once, and killed mid-list goes on from the recorded page, each record once', async () => {
    const organisations = liveMapping('v1-organisations');
    const people = liveMapping('v1-people');
    writeFileSync(
      join(work, 'plan.yaml'),
      `version: 1\nsteps:\n  - name: organisations\n    mapping: ${organisations}\n  - name: people\n    mapping: ${people}\n`,
    );
    const stateDir = join(work, '.crm-ferry');
    const args = ['run', 'plan.yaml', '--concurrency', '2'];
    const subLists = (): number => requests.filter((url) => /\/(customfields|tag)\b/.test(url)).length;

    // Killed (SIGKILL) as the list's sixth page is asked for, by whichever step needed it first.
    expect(await killedAtSixthPage(args)).toBe('SIGKILL');
    // Two steps, one read: each page asked for once, each record's sub-lists once.
    expect(listStarts()).toEqual([0, 1, 2, 3, 4, 5].map((i) => i * PAGE));
    expect(subLists()).toBe(2 * 5 * PAGE);
    expect(cursorOf(stateDir)).toMatchObject({ next: 5 * PAGE, done: false });

    requests = [];
    const resumed = await runCli([...args, '--json'], { cwd: work, env: env() });
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(listStarts()).toEqual(Array.from({ length: PAGES - 5 }, (_, i) => (i + 5) * PAGE));
    expect(subLists()).toBe(2 * (ORGANISATIONS + PEOPLE - 5 * PAGE));
    const steps = JSON.parse(resumed.stdout.trim().split('\n').at(-1) as string).summary.steps as Array<{
      step: string;
      rowsRead: number;
      missing: number;
    }>;
    expect(steps.map((s) => [s.step, s.rowsRead, s.missing])).toEqual([
      ['organisations', ORGANISATIONS, 0],
      ['people', PEOPLE, 0],
    ]);
    expect(await organisationsIn(b)).toEqual(everyOrganisation);
    const persons = (
      (await b.v2('GET', '/parties?perPage=100')).body.parties as Array<{
        type: string;
        lastName?: string;
        organisation?: { id: number };
      }>
    ).filter((p) => p.type === 'person');
    expect(persons.map((p) => p.lastName).sort()).toEqual(
      Array.from({ length: PEOPLE }, (_, i) => `No ${i + 1}`).sort(),
    );
    expect(persons.every((p) => p.organisation?.id !== undefined)).toBe(true);
    expect(spoolFiles(stateDir)).toEqual([]);
  }, 60_000);
});

describe('the spool of a run', () => {
  it('is kept by a run cut short, dropped by a finished one (the next, --since, reads the account again) and by --fresh', async () => {
    const mapping = liveMapping('v1-organisations');
    const stateDir = join(work, 'state');
    const args = ['import', '--mapping', mapping, '--input', `v1+${a.url}`, '--state-dir', stateDir];

    // Cut short by --limit: the pages read are recorded, and the next run goes on from them.
    const limited = await runCli([...args, '--limit', String(PAGE + 2)], { cwd: work, env: env() });
    expect(limited.code, limited.stdout + limited.stderr).toBe(0);
    expect(listStarts()).toEqual([0, PAGE]);
    expect(cursorOf(stateDir)).toMatchObject({ next: PAGE, done: false });

    requests = [];
    const rest = await runCli(args, { cwd: work, env: env() });
    expect(rest.code, rest.stdout + rest.stderr).toBe(0);
    expect(listStarts()[0]).toBe(PAGE);
    expect(await organisationsIn(b)).toEqual(everyOrganisation);
    expect(spoolFiles(stateDir)).toEqual([]);

    // A finished run left no spool: a delta sync reads the account again, from the first page.
    requests = [];
    const delta = await runCli([...args, '--since', '2000-01-01'], { cwd: work, env: env() });
    expect(delta.code, delta.stdout + delta.stderr).toBe(0);
    expect(listStarts()).toEqual(Array.from({ length: PAGES }, (_, i) => i * PAGE));
    expect(requests.every((url) => !url.startsWith('/api/party?') || url.includes('lastmodified='))).toBe(true);
    expect(spoolFiles(stateDir)).toEqual([]);

    // --fresh sets the state aside, a spool included: the list is read from its first page (and,
    // the journal set aside too, the records written again: what --fresh is for).
    await runCli([...args, '--limit', String(PAGE + 2)], { cwd: work, env: env() });
    expect(cursorOf(stateDir)).toMatchObject({ next: PAGE, done: false });
    requests = [];
    const fresh = await runCli([...args, '--fresh', '--yes', '--limit', String(PAGE + 2)], { cwd: work, env: env() });
    expect(fresh.code, fresh.stdout + fresh.stderr).toBe(0);
    expect(listStarts()).toEqual([0, PAGE]);
  }, 60_000);
});

describe('the count of a live step for the progress display', () => {
  it('comes from a spool holding the whole list, and never from the old account', async () => {
    const step = await prepareSingleStep(liveMapping('v1-organisations'), `v1+${a.url}`);
    const live = v1LiveConnection({ token: a.token });
    try {
      connectLiveSteps([step], live);
      step.spool = join(work, 'spool');
      // Nothing spooled yet: no total, and no request.
      await expect(countStepItems(step)).rejects.toMatchObject({ code: 'USAGE' });
      expect(requests).toEqual([]);
      const compiled = await compileMapping(step.mapping, { file: step.mappingFile });
      const opened = await openStepItems(step, compiled, undefined);
      let rows = 0;
      for await (const item of opened?.items ?? []) if (item.kind === 'record') rows++;
      expect(rows).toBe(ORGANISATIONS);
      const read = requests.length;
      expect(await countStepItems(step)).toBe(ORGANISATIONS);
      expect(requests.length).toBe(read);
    } finally {
      await live.close();
    }
  });
});
