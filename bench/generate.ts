/**
 * Deterministic test data for benchmarks: realistic contacts, the same bytes for the same seed.
 *
 *   npx tsx bench/generate.ts [--rows 1000000] [--seed 1] [--out bench/.data/contacts-1m.csv]
 *
 * Other benchmarks import `generateContacts` and `writeContactsCsv`.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { seededRandom } from '../src/util/seeded-random.ts';

/** Benchmarks must see the same data on every machine: a seeded generator. */
export const createRandom = seededRandom;

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
  'Quentin',
  'Rosa',
  'Sven',
  'Zoë',
];
const LAST = [
  'Smith',
  'Müller',
  'García',
  'Dubois',
  'Rossi',
  'Novak',
  "O'Brien",
  'Jensen',
  'Ødegård',
  'Kowalski',
  'Martin',
  'Nguyen',
  'Schmidt',
  'Fernández',
  'Brown',
];
const COMPANIES = [
  'Acme Ltd',
  'Globex, Inc.',
  'Initech GmbH',
  'Umbrella plc',
  'Stark & Sons',
  'Wayne Enterprises',
  'Hooli',
  'Vandelay Industries',
  'Soylent SA',
  'Tyrell Corp',
];
const TITLES = [
  'Sales Manager',
  'CEO',
  'Office Manager',
  'Head of IT',
  'Buyer',
  'Accountant',
  'Marketing Lead',
  'Engineer',
];
const STREETS = ['High Street', 'Rue de la Paix', 'Hauptstraße', 'Calle Mayor', 'Via Roma', 'Main St', 'Church Lane'];
const CITIES: [string, string, string][] = [
  ['London', 'SW1A 1AA', 'United Kingdom'],
  ['Paris', '75001', 'France'],
  ['Berlin', '10115', 'Germany'],
  ['Madrid', '28001', 'Spain'],
  ['Rome', '00118', 'Italy'],
  ['Boston', '02108', 'United States'],
  ['Oslo', '0150', 'Norway'],
];
const TAGS = ['customer', 'lead', 'vip', 'newsletter', 'partner', 'event-2024'];
const NOTES = [
  '',
  '',
  'Met at the trade fair; wants a quote for 50 licences.',
  'Prefers calls after 3pm.\nAssistant: "Jo" on ext. 214',
  'Called about the "premium" plan, follow up in Q3',
  'Budget approved, 12,500 EUR',
];

export const CONTACT_COLUMNS = [
  'id',
  'first_name',
  'last_name',
  'email',
  'phone',
  'company',
  'job_title',
  'website',
  'street',
  'city',
  'postcode',
  'country',
  'tags',
  'notes',
  'created_on',
] as const;

function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)] as T;
}

/** Yields contacts as arrays of field values, in CONTACT_COLUMNS order. */
export function* generateContacts(count: number, seed = 1): Generator<string[]> {
  const random = createRandom(seed);
  for (let i = 1; i <= count; i++) {
    const first = pick(random, FIRST);
    const last = pick(random, LAST);
    const [city, postcode, country] = pick(random, CITIES);
    const tagCount = Math.floor(random() * 3);
    const tags = Array.from({ length: tagCount }, () => pick(random, TAGS)).join(';');
    const day = 1 + Math.floor(random() * 28);
    const month = 1 + Math.floor(random() * 12);
    const company = pick(random, COMPANIES);
    const local = `${first}.${last}`
      .toLowerCase()
      .normalize('NFD')
      .replace(/[^a-z.]/g, '');
    yield [
      String(i),
      first,
      last,
      `${local}${i}@example.com`,
      `+44 0${Math.floor(1000000000 + random() * 8999999999)}`,
      company,
      pick(random, TITLES),
      `https://www.${company.toLowerCase().replace(/[^a-z]/g, '')}.example`,
      `${1 + Math.floor(random() * 200)} ${pick(random, STREETS)}`,
      city,
      postcode,
      country,
      tags,
      pick(random, NOTES),
      `${2015 + Math.floor(random() * 10)}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`,
    ];
  }
}

/** Quotes a field when it needs it, the way spreadsheet programs write CSV. */
export function csvField(value: string, delimiter = ','): string {
  if (value.includes('"') || value.includes(delimiter) || value.includes('\n') || value.includes('\r')) {
    return `"${value.replace(/"/g, '""')}"`;
  }
  return value;
}

/** Writes rows as a UTF-8 CSV with a header, respecting back-pressure. Returns the number of bytes written. */
export async function writeContactsCsv(
  path: string,
  rows: Iterable<string[]>,
  options: { delimiter?: string; lineBreak?: string } = {},
): Promise<number> {
  const delimiter = options.delimiter ?? ',';
  const lineBreak = options.lineBreak ?? '\n';
  await mkdir(dirname(path), { recursive: true });
  const out = createWriteStream(path);
  const line = (fields: readonly string[]): string =>
    fields.map((f) => csvField(f, delimiter)).join(delimiter) + lineBreak;
  let batch = line(CONTACT_COLUMNS);
  for (const row of rows) {
    batch += line(row);
    if (batch.length > 1 << 16) {
      if (!out.write(batch)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      batch = '';
    }
  }
  out.write(batch);
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return out.bytesWritten;
}

export const BENCH_DATA_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '.data');

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (isMain) {
  const { values } = parseArgs({
    options: { rows: { type: 'string' }, seed: { type: 'string' }, out: { type: 'string' } },
  });
  const rows = Number(values.rows ?? 1_000_000);
  const seed = Number(values.seed ?? 1);
  const out = values.out ?? resolve(BENCH_DATA_DIR, `contacts-${rows}.csv`);
  const bytes = await writeContactsCsv(out, generateContacts(rows, seed));
  process.stdout.write(`wrote ${rows} rows, ${(bytes / 1e6).toFixed(1)} MB to ${out}\n`);
}
