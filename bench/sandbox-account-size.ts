// What one request costs the sandbox as the account grows: a create of a person whose
// organisation is given by name (an organisation the account has), and `/parties/search` for an
// e-mail address, a name and a phone number the account holds. Not a test; run it with
//   npm run bench -- sandbox-account-size [--sizes 0,100000,1000000] [--seconds 4] [--root DIR]
// `--root` names a checkout of other code (e.g. main, exported with `git archive`, with a link to
// this node_modules) to measure the same requests on it, side by side.
//
// Each code runs in a child process of its own, which measures the sizes in turn as its account
// grows (the parties are put straight into the store, not sent over HTTP), so that the sizes meet
// the same process and compiled code, and moments of a shared machine as close as can be. Each
// request goes through the whole server (hooks, authentication, routing, serialising) by
// Fastify's inject, one at a time, so the figure is the sandbox's own work: the CPU time of the
// process per request (user + system, the collector's threads included), and the wall time's
// median and 90th percentile; a full collection runs before each kind of request. The machine may
// be shared: the load average is printed with every line.
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const FIRST = [
  'Anna',
  'Ben',
  'Chloé',
  'David',
  'Emma',
  'François',
  'Grace',
  'Hamza',
  'Inès',
  'Jonas',
  'Katarzyna',
  'Liam',
  'María',
  'Noah',
  'Olivia',
  'Pedro',
];
const LAST = [
  'Smith',
  'Müller',
  'García',
  'Dubois',
  'Rossi',
  'Novak',
  'Jensen',
  'Kowalski',
  'Martin',
  'Nguyen',
  'Schmidt',
  'Brown',
];
/** One party in ten is an organisation; every person works for one. */
const ORGANISATION_EVERY = 10;

interface Result {
  root: string;
  parties: number;
  kind: string;
  requests: number;
  cpuMsPerRequest: number;
  medianMs: number;
  p90Ms: number;
  seedSeconds: number;
  rssMb: number;
  load: number;
}

function personOf(i: number): { firstName: string; lastName: string; email: string; phone: string } {
  const firstName = FIRST[i % FIRST.length] as string;
  const lastName = `${LAST[Math.floor(i / FIRST.length) % LAST.length]}${i}`;
  return {
    firstName,
    lastName,
    email: `${firstName.toLowerCase()}.${i}@company${i % 997}.example`,
    phone: `+44 20 ${String(30_000_000 + i)}`,
  };
}

async function child(root: string, sizes: number[], seconds: number): Promise<void> {
  const { startSandbox } = (await import(
    pathToFileURL(resolve(root, 'src/sandbox/index.ts')).href
  )) as typeof import('../src/sandbox/index.ts');
  const { addParty } = (await import(
    pathToFileURL(resolve(root, 'test/helpers/records.ts')).href
  )) as typeof import('../test/helpers/records.ts');
  const { seededRandom } = (await import(
    pathToFileURL(resolve(root, 'src/util/seeded-random.ts')).href
  )) as typeof import('../src/util/seeded-random.ts');
  const sandbox = await startSandbox({
    port: 0,
    host: '127.0.0.1',
    tokens: ['bench-token-0123456789'],
    dataFile: null,
  });
  const headers = { authorization: 'Bearer bench-token-0123456789', 'content-type': 'application/json' };
  const random = seededRandom(11);
  // The empty account's person and organisation, made first (the account has them at every size).
  const first = personOf(1);
  const madeFirst = await sandbox.app.inject({
    method: 'POST',
    url: '/api/v2/parties',
    headers,
    payload: JSON.stringify({
      party: {
        type: 'person',
        firstName: first.firstName,
        lastName: first.lastName,
        organisation: { name: 'Company 0' },
        emailAddresses: [{ address: first.email }],
        phoneNumbers: [{ number: first.phone }],
      },
    }),
  });
  if (madeFirst.statusCode !== 201) throw new Error(`the first create answered ${madeFirst.statusCode}`);
  let seeded = 0;
  let organisationId = 0;
  const madeFirstId = (JSON.parse(madeFirst.body) as { party: { id: number } }).party.id;
  let firstSeededId = 0;
  for (const parties of sizes) {
    const began = performance.now();
    for (; seeded < parties; seeded += 1) {
      const i = seeded;
      if (i % ORGANISATION_EVERY === 0) {
        organisationId = addParty(sandbox.store, {
          type: 'organisation',
          firstName: null,
          lastName: null,
          name: `Company ${i}`,
        }).id;
        if (i === 0) firstSeededId = organisationId;
        continue;
      }
      const person = personOf(i);
      addParty(sandbox.store, {
        firstName: person.firstName,
        lastName: person.lastName,
        organisationId,
        emailAddresses: [{ id: i * 2, type: 'Work', address: person.email }],
        phoneNumbers: [{ id: i * 2 + 1, type: 'Work', number: person.phone }],
      });
    }
    sandbox.store.forgetChanges();
    const seedSeconds = (performance.now() - began) / 1000;
    await measure(parties, seedSeconds);
  }
  await sandbox.close();

  async function measure(parties: number, seedSeconds: number): Promise<void> {
    // A party the account holds (in an empty account, the one made first).
    const existing = (): number => {
      const i = Math.floor(random() * Math.max(1, parties));
      return i % ORGANISATION_EVERY === 0 ? i + 1 : i;
    };
    const organisation =
      parties > 0
        ? (): string => `Company ${Math.floor(random() * (parties / ORGANISATION_EVERY)) * ORGANISATION_EVERY}`
        : (): string => 'Company 0';
    let made = 0;
    // The id of the i-th party seeded: ids follow the seeding order, after the empty account's two.
    const idOf = (i: number): number => (parties > 0 ? firstSeededId + i : (madeFirstId as number));
    const kinds: Record<string, () => { method: 'GET' | 'POST'; url: string; payload?: string; expect: number }> = {
      'create, organisation by name': () => {
        made += 1;
        return {
          method: 'POST',
          url: '/api/v2/parties',
          payload: JSON.stringify({
            party: {
              type: 'person',
              firstName: 'New',
              lastName: `Person ${made}`,
              organisation: { name: organisation() },
            },
          }),
          expect: 201,
        };
      },
      'search, e-mail address': () => ({
        method: 'GET',
        url: `/api/v2/parties/search?q=${encodeURIComponent(personOf(existing()).email)}`,
        expect: 200,
      }),
      'search, name': () => {
        const person = personOf(existing());
        return {
          method: 'GET',
          url: `/api/v2/parties/search?q=${encodeURIComponent(`${person.firstName} ${person.lastName}`)}`,
          expect: 200,
        };
      },
      'search, phone number': () => ({
        method: 'GET',
        url: `/api/v2/parties/search?q=${encodeURIComponent(personOf(existing()).phone.slice(7))}`,
        expect: 200,
      }),
      // 100 records read by id in one filter query, as verify reads an import's records.
      'filter, 100 ids': () => ({
        method: 'POST',
        url: '/api/v2/parties/filters/results?perPage=100',
        payload: JSON.stringify({
          filter: {
            conditions: [
              {
                orGroup: Array.from({ length: 100 }, () => ({ field: 'id', operator: 'is', value: idOf(existing()) })),
              },
            ],
          },
        }),
        expect: 200,
      }),
    };
    for (const [kind, next] of Object.entries(kinds)) {
      // Requests first, so that the first requests' one-off costs (an index built, code compiled) are not
      // counted, and a full collection, so that one kind does not pay for the garbage of the last.
      // Up to 200 requests or a second, whichever ends first: the code compiled before it is timed.
      const warm = performance.now() + 1000;
      for (let i = 0; i < 200 && (i < 3 || performance.now() < warm); i += 1)
        await sandbox.app.inject({ ...next(), headers });
      (globalThis as { gc?: () => void }).gc?.();
      const latencies: number[] = [];
      const cpu = process.cpuUsage();
      const until = performance.now() + seconds * 1000;
      while (performance.now() < until || latencies.length < 5) {
        const request = next();
        const started = performance.now();
        const answer = await sandbox.app.inject({
          method: request.method,
          url: request.url,
          headers,
          ...(request.payload ? { payload: request.payload } : {}),
        });
        latencies.push(performance.now() - started);
        if (answer.statusCode !== request.expect)
          throw new Error(`${kind}: ${request.url} answered ${answer.statusCode}: ${answer.body.slice(0, 300)}`);
        if (
          request.method === 'GET' &&
          parties > 0 &&
          (JSON.parse(answer.body) as { parties: unknown[] }).parties.length === 0
        )
          throw new Error(`${kind}: ${request.url} found nothing`);
      }
      const used = process.cpuUsage(cpu);
      latencies.sort((a, b) => a - b);
      const result: Result = {
        root,
        parties,
        kind,
        requests: latencies.length,
        cpuMsPerRequest: (used.user + used.system) / 1000 / latencies.length,
        medianMs: latencies[Math.floor(latencies.length / 2)] as number,
        p90Ms: latencies[Math.floor(latencies.length * 0.9)] as number,
        seedSeconds,
        rssMb: Math.round(process.memoryUsage().rss / 2 ** 20),
        load: loadavg()[0] as number,
      };
      process.stdout.write(`${JSON.stringify(result)}\n`);
    }
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      child: { type: 'boolean', default: false },
      sizes: { type: 'string', default: '0,10000,100000' },
      seconds: { type: 'string', default: '4' },
      root: { type: 'string', multiple: true },
      parties: { type: 'string', default: '0' },
    },
  });
  const here = fileURLToPath(new URL('..', import.meta.url));
  if (values.child) {
    await child(values.root?.[0] ?? here, values.parties.split(',').map(Number), Number(values.seconds));
    return;
  }
  const roots = values.root ?? [here];
  const script = fileURLToPath(import.meta.url);
  for (const root of roots) {
    const run = spawnSync(
      process.execPath,
      [
        '--max-old-space-size=8192',
        '--expose-gc',
        '--import',
        'tsx',
        script,
        '--child',
        '--root',
        root,
        '--parties',
        values.sizes,
        '--seconds',
        values.seconds,
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
        encoding: 'utf8',
      },
    );
    if (run.status !== 0) throw new Error(`the run on ${root} failed (${run.status ?? run.signal})`);
    for (const line of run.stdout.trim().split('\n')) {
      const result = JSON.parse(line) as Result;
      process.stdout.write(`${line}\n`);
      process.stdout.write(
        `# ${root === here ? 'this code' : root}, ${result.parties.toLocaleString('en-US')} parties, ${result.kind}: ${result.cpuMsPerRequest.toFixed(3)} ms CPU a request, median ${result.medianMs.toFixed(3)} ms, p90 ${result.p90Ms.toFixed(3)} ms (${result.requests} requests; seeded in ${result.seedSeconds.toFixed(1)} s; RSS ${result.rssMb} MB; load ${result.load.toFixed(2)})\n`,
      );
    }
  }
}

await main();
