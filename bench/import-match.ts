// Look-ups of `match:` when the run is held back by the rate limit: how many filter queries a
// row costs, and how many requests in all. Not a test; run it with
// `npm run bench -- import-match [--rows N] [--long-rows N] [--concurrency 4,16] [--dry-run] [--linked]`.
//
// For each window (40 requests a second in one-second windows; 200 per 20-second window) and
// each concurrency, a sandbox is seeded with people for half of the rows (same e-mail address, an
// older job title), then restarted on that data with the rate limit, and the rows are imported
// with `match: { by: email, onMatch: update }` by a client built as `crm-ferry import
// --concurrency N` builds it. The requests are counted from the client's log. The long window
// gets fewer rows (`--long-rows`), as 10 requests a second make a long run. With `--linked` the
// people link to organisations (one to 20 people, every second one in the account, `match: {by:
// name}`), in a plan of two steps: people wait for their organisation to be written.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { connect } from '../src/client/connect.ts';
import { toImportCommandOptions } from '../src/cli/import.ts';
import { runImport } from '../src/load/index.ts';
import { startSandbox } from '../src/sandbox/index.ts';

const TOKEN = 'bench-match-token-0123';

const MAPPING = [
  'version: 1',
  'entity: party',
  'key: "{{id}}"',
  'match: { by: email, onMatch: update }',
  'fields:',
  '  - { to: type, value: person }',
  '  - { to: firstName, value: { column: first } }',
  '  - { to: lastName, value: { column: last } }',
  '  - { to: jobTitle, value: { column: title } }',
  '  - { to: email, type: Work, value: { column: email } }',
  '',
].join('\n');

const emailOf = (i: number): string => `person${i}@match-bench.example`;

const ORGANISATIONS = [
  'version: 1',
  'entity: party',
  'key: "{{id}}"',
  'match: { by: name, onMatch: update }',
  'fields:',
  '  - { to: type, value: organisation }',
  '  - { to: name, value: { column: name } }',
  '  - { to: about, value: { column: about } }',
  '',
].join('\n');
const PEOPLE_PER_ORGANISATION = 20;
const organisationOf = (k: number): string => `Match Bench Org ${k}`;

/** The project folder: the mapping (a plan of organisations and people when linked) and N rows, every second row a person the account has. */
function writeProject(
  dir: string,
  rows: number,
  linked: boolean,
): { mappingFile: string; inputFile: string; planFile: string | null } {
  mkdirSync(dir, { recursive: true });
  const mappingFile = join(dir, 'people.yaml');
  const inputFile = join(dir, 'people.csv');
  writeFileSync(
    mappingFile,
    linked
      ? MAPPING.replace('fields:\n', 'fields:\n  - { to: organisation, ref: organisations, key: "{{org}}" }\n')
      : MAPPING,
  );
  const lines = Array.from(
    { length: rows },
    (_, i) => `P${i},First${i},Last${i},Engineer,${emailOf(i)},O${Math.floor(i / PEOPLE_PER_ORGANISATION)}`,
  );
  writeFileSync(inputFile, `id,first,last,title,email,org\n${lines.join('\n')}\n`);
  if (!linked) return { mappingFile, inputFile, planFile: null };
  writeFileSync(join(dir, 'orgs.yaml'), ORGANISATIONS);
  const orgs = Array.from(
    { length: Math.ceil(rows / PEOPLE_PER_ORGANISATION) },
    (_, k) => `O${k},${organisationOf(k)},Imported`,
  );
  writeFileSync(join(dir, 'orgs.csv'), `id,name,about\n${orgs.join('\n')}\n`);
  const planFile = join(dir, 'plan.yaml');
  writeFileSync(
    planFile,
    'version: 1\nsteps:\n  - { name: organisations, mapping: orgs.yaml, input: orgs.csv }\n  - { name: people, mapping: people.yaml, input: people.csv }\n',
  );
  return { mappingFile, inputFile, planFile };
}

/** A data file holding a person for every even row (another job title, so that a match is an update). */
async function seed(dataFile: string, rows: number, linked: boolean): Promise<void> {
  const box = await startSandbox({ port: 0, host: '127.0.0.1', tokens: [TOKEN], dataFile, reset: true });
  const people = Array.from({ length: Math.ceil(rows / 2) }, (_, k): unknown => {
    const i = 2 * k;
    return {
      type: 'person',
      firstName: `First${i}`,
      lastName: `Last${i}`,
      jobTitle: 'Trainee',
      emailAddresses: [{ type: 'Home', address: emailOf(i) }],
    };
  });
  const organisations = linked
    ? Array.from({ length: Math.ceil(rows / PEOPLE_PER_ORGANISATION / 2) }, (_, k): unknown => ({
        type: 'organisation',
        name: organisationOf(2 * k),
      }))
    : [];
  const parties = [...organisations, ...people];
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < parties.length) {
        const party = parties[next++];
        const answer = await request(`${box.url}/api/v2/parties`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ party }),
        });
        await answer.body.text();
        if (answer.statusCode !== 201) throw new Error(`seeding: ${answer.statusCode}`);
      }
    }),
  );
  await box.close();
}

interface Measured {
  rows: number;
  concurrency: number;
  window: string;
  lookUps: number;
  lookUpsPerRow: number;
  linked: boolean;
  requests: number;
  requestsPerRow: number;
  matched: number;
  created: number;
  seconds: number;
  dryRunLookUps: number | null;
}

async function measure(
  work: string,
  rows: number,
  concurrency: number,
  limit: number,
  windowSeconds: number,
  dryRunFirst: boolean,
  linked: boolean,
): Promise<Measured> {
  const dir = join(work, `c${concurrency}-w${windowSeconds}`);
  const { mappingFile, inputFile, planFile } = writeProject(dir, rows, linked);
  const dataFile = join(dir, 'sandbox.json');
  await seed(dataFile, rows, linked);
  const box = await startSandbox({
    port: 0,
    host: '127.0.0.1',
    tokens: [TOKEN],
    dataFile,
    rateLimit: { limit, windowSeconds },
  });
  try {
    let filters = 0;
    const { transport } = toImportCommandOptions(
      { values: { concurrency: String(concurrency), mapping: mappingFile, input: inputFile }, positionals: [] },
      process.cwd(),
      'mapping',
    );
    const { client } = await connect({
      token: TOKEN,
      baseUrl: box.url,
      env: {},
      transport,
      log: (line) => {
        if (line.includes('/filters/results') && / -> \d{3}$/.test(line)) filters += 1;
      },
    });
    const account = { baseUrl: box.url, account: box.url };
    const source =
      planFile === null ? { kind: 'mapping' as const, mappingFile, inputFile } : { kind: 'plan' as const, planFile };
    const options = { source, stateDir: join(dir, '.crm-ferry'), concurrency };
    let dryRunLookUps: number | null = null;
    if (dryRunFirst)
      dryRunLookUps = (await runImport({ ...options, dryRun: true }, { client, account })).dryRun?.lookUps ?? null;
    filters = 0;
    const started = performance.now();
    const summary = await runImport(options, { client, account });
    const seconds = (performance.now() - started) / 1000;
    await client.close();
    const all = summary.steps.reduce((sum, s) => sum + s.rowsRead, 0);
    const step = summary.steps.find((s) => s.step === 'people') ?? summary.steps[0];
    return {
      rows: all,
      concurrency,
      window: `${limit}/${windowSeconds}s`,
      linked,
      lookUps: filters,
      lookUpsPerRow: Number((filters / all).toFixed(4)),
      requests: summary.requests,
      requestsPerRow: Number((summary.requests / all).toFixed(3)),
      matched: step?.matched ?? 0,
      created: step?.created ?? 0,
      seconds: Number(seconds.toFixed(1)),
      dryRunLookUps,
    };
  } finally {
    await box.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string' },
      'long-rows': { type: 'string' },
      concurrency: { type: 'string' },
      'dry-run': { type: 'boolean' },
      linked: { type: 'boolean' },
    },
    strict: false,
  });
  const rows = Number(values.rows ?? 1000);
  const longRows = Number(values['long-rows'] ?? 400);
  const concurrencies = String(values.concurrency ?? '4,16')
    .split(',')
    .map(Number);
  const work = join(tmpdir(), `crm-ferry-bench-match-${process.pid}`);
  try {
    for (const [limit, windowSeconds, n] of [
      [40, 1, rows],
      [200, 20, longRows],
    ] as const) {
      for (const concurrency of concurrencies) {
        const m = await measure(
          work,
          n,
          concurrency,
          limit,
          windowSeconds,
          values['dry-run'] === true,
          values.linked === true,
        );
        console.log(JSON.stringify({ bench: 'import-match', ...m }));
        console.log(
          `${m.rows} rows${m.linked ? ' (organisations and people)' : ''} (people: ${m.matched} matched, ${m.created} created), concurrency ${m.concurrency}, ${m.window}: ${m.lookUps} look-ups (${m.lookUpsPerRow} a row${m.dryRunLookUps === null ? '' : `; the dry run ${m.dryRunLookUps}`}), ${m.requests} requests (${m.requestsPerRow} a row), ${m.seconds} s`,
        );
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
