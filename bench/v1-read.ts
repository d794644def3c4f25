/**
 * Legacy v1 export reader benchmark (not a test): writes a 300,000-record v1 parties XML export
 * (people with contacts, custom fields, tags and nested history, and some organisations) into
 * bench/.data/ once, and the same records as v1 JSON, then reads each with readV1Export in a
 * child process of its own and reports rows/s and peak RSS.
 *
 *   npm run bench -- v1-read      (or: npx tsx bench/v1-read.ts [--records 300000])
 */
import { createWriteStream, existsSync, statSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BENCH_DATA_DIR, generateContacts } from './generate.ts';
import { spawnTsx } from './harness.ts';
import { readV1Export } from '../src/sources/v1/v1-export.ts';

const TARGET_RSS_MB = 150;

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '300000' },
    'write-only': { type: 'boolean', default: false },
    'measure-only': { type: 'string' },
  },
});
const records = Number(args.records);
const script = fileURLToPath(import.meta.url);
const xmlFile = join(BENCH_DATA_DIR, `parties-${records}.xml`);
const jsonFile = join(BENCH_DATA_DIR, `parties-${records}.json`);

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

interface Party {
  kind: 'person' | 'organisation';
  fields: Record<string, string>;
  emails: string[];
  phones: string[];
  city: string;
  country: string;
  industry: string;
  tags: string[];
  notes: string[];
}

function* parties(count: number): Generator<Party> {
  let n = 0;
  for (const c of generateContacts(count, 11)) {
    n++;
    const [
      id = '',
      first = '',
      last = '',
      email = '',
      phone = '',
      company = '',
      job = '',
      ,
      ,
      city = '',
      ,
      country = '',
      tags = '',
      note = '',
      created = '',
    ] = c;
    const organisation = n % 10 === 0;
    yield {
      kind: organisation ? 'organisation' : 'person',
      fields: organisation
        ? { id, name: company, createdOn: `${created}T09:00:00Z` }
        : {
            id,
            firstName: first,
            lastName: last,
            jobTitle: job,
            organisationName: company,
            createdOn: `${created}T09:00:00Z`,
          },
      emails: [email],
      phones: n % 3 === 0 ? [phone, `${phone}9`] : [phone],
      city,
      country,
      industry: company.split(' ')[0] ?? '',
      tags: tags === '' ? [] : tags.split(';'),
      notes: n % 4 === 0 ? [note] : [],
    };
  }
}

function partyXml(party: Party): string {
  const fields = Object.entries(party.fields)
    .map(([key, value]) => `<${key}>${escapeXml(value)}</${key}>`)
    .join('');
  const emails = party.emails
    .map((address) => `<email><type>Work</type><emailAddress>${escapeXml(address)}</emailAddress></email>`)
    .join('');
  const phones = party.phones
    .map((number) => `<phone><type>Work</type><phoneNumber>${escapeXml(number)}</phoneNumber></phone>`)
    .join('');
  const address = `<address><type>Office</type><city>${escapeXml(party.city)}</city><country>${escapeXml(party.country)}</country></address>`;
  const custom = `<customFields><customField><label>Industry</label><text>${escapeXml(party.industry)}</text></customField></customFields>`;
  const tags =
    party.tags.length === 0
      ? ''
      : `<tags>${party.tags.map((tag) => `<tag><name>${escapeXml(tag)}</name></tag>`).join('')}</tags>`;
  const history =
    party.notes.length === 0
      ? ''
      : `<history>${party.notes.map((note) => `<historyItem><type>Note</type><note>${escapeXml(note)}</note></historyItem>`).join('')}</history>`;
  return `  <${party.kind}>${fields}<contacts>${address}${emails}${phones}</contacts>${custom}${tags}${history}</${party.kind}>\n`;
}

function partyJson(party: Party): unknown {
  return {
    ...party.fields,
    contacts: {
      address: { type: 'Office', city: party.city, country: party.country },
      email: party.emails.map((emailAddress) => ({ type: 'Work', emailAddress })),
      phone: party.phones.map((phoneNumber) => ({ type: 'Work', phoneNumber })),
    },
    customFields: { customField: [{ label: 'Industry', text: party.industry }] },
    tags: { tag: party.tags.map((name) => ({ name })) },
    history: { historyItem: party.notes.map((note) => ({ type: 'Note', note })) },
  };
}

/** Writes with backpressure so that generating the file does not need the file in memory. */
async function writeLines(file: string, lines: Iterable<string>): Promise<void> {
  const partial = `${file}.partial`;
  const out = createWriteStream(partial);
  for (const line of lines) {
    if (!out.write(line)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  await rename(partial, file);
}

async function writeExports(): Promise<void> {
  await writeLines(
    xmlFile,
    (function* () {
      yield `\ufeff<?xml version="1.0" encoding="UTF-8"?>\n<parties size="${records}">\n`;
      for (const party of parties(records)) yield partyXml(party);
      yield '</parties>\n';
    })(),
  );
  // JSON keeps the v1 shape: people and organisations in two lists under `parties`.
  await writeLines(
    jsonFile,
    (function* () {
      for (const kind of ['person', 'organisation'] as const) {
        yield kind === 'person' ? '{"parties":{"person":[\n' : '],"organisation":[\n';
        let first = true;
        for (const party of parties(records)) {
          if (party.kind !== kind) continue;
          yield `${first ? '' : ',\n'}${JSON.stringify(partyJson(party))}`;
          first = false;
        }
      }
      yield '\n]}}\n';
    })(),
  );
}

interface Measurement {
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  peakRssMb: number;
}

async function measure(file: string): Promise<Measurement> {
  let count = 0;
  let peakSampled = process.memoryUsage().rss;
  const started = performance.now();
  for await (const item of readV1Export(file)) {
    if (item.kind !== 'row') throw new Error(`unexpected row error: ${item.error.message}`);
    count++;
    if (count % 5000 === 0) peakSampled = Math.max(peakSampled, process.memoryUsage().rss);
  }
  const seconds = (performance.now() - started) / 1000;
  const peakRss = Math.max(peakSampled, process.resourceUsage().maxRSS * 1024);
  return {
    rows: count,
    seconds: Math.round(seconds * 10) / 10,
    rowsPerSecond: Math.round(count / seconds),
    peakRssMb: Math.round(peakRss / 1024 / 1024),
  };
}

function runChild(extra: string[]): string {
  return spawnTsx(script, ['--records', String(records), ...extra]);
}

async function main(): Promise<void> {
  if (args['write-only']) {
    await writeExports();
    return;
  }
  if (args['measure-only'] !== undefined) {
    console.log(JSON.stringify(await measure(args['measure-only'])));
    return;
  }
  if (!existsSync(xmlFile) || !existsSync(jsonFile)) {
    await mkdir(BENCH_DATA_DIR, { recursive: true });
    console.log(`writing ${xmlFile} and ${jsonFile} ...`);
    runChild(['--write-only']);
  }
  let failed = false;
  for (const file of [xmlFile, jsonFile]) {
    const result = JSON.parse(runChild(['--measure-only', file])) as Measurement;
    const fileMb = Math.round((statSync(file).size / 1024 / 1024) * 10) / 10;
    console.log(
      JSON.stringify({
        file: file.slice(BENCH_DATA_DIR.length + 1),
        fileMb,
        ...result,
        targetPeakRssMb: TARGET_RSS_MB,
      }),
    );
    if (result.rows !== records) throw new Error(`read ${result.rows} records from ${file}, wrote ${records}`);
    if (result.peakRssMb > TARGET_RSS_MB) failed = true;
  }
  if (failed) {
    console.error(`peak RSS over the ${TARGET_RSS_MB} MB target`);
    process.exitCode = 1;
  }
}

await main();
