import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import yauzl from 'yauzl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrmClient } from '../../src/client/index.ts';
import { FerryError } from '../../src/errors/index.ts';
import {
  normaliseExportOptions,
  runExport,
  splitWhere,
  type ExportFlags,
  type ExportSummary,
} from '../../src/export/index.ts';
import { listXlsxSheets, readXlsx } from '../../src/sources/xlsx/xlsx.ts';
import { runCli } from '../helpers/fake-io.ts';
import { addParty } from '../helpers/records.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const dir = mkdtempSync(join(tmpdir(), 'ferry-export-'));
let box: TestSandbox;
let client: CrmClient;
const ids: Record<string, number> = {};
/**
 * The service's time, and the export's: real time, which a test moves forward where it would
 * otherwise wait for the service's next whole second.
 */
let ahead = 0;
const serviceNow = (): Date => new Date(Date.now() + ahead);

beforeAll(async () => {
  box = await startTestSandbox({ now: serviceNow });
  client = new CrmClient({ baseUrl: box.url, auth: box.token });
  const party = async (name: string, body: Record<string, unknown>): Promise<void> => {
    const answer = await box.v2('POST', '/parties', { party: body });
    expect(answer.status).toBe(201);
    ids[name] = answer.body.party.id;
  };
  await party('acme', {
    type: 'organisation',
    name: 'Acme Ltd',
    addresses: [{ type: 'Office', city: 'London', country: 'United Kingdom' }],
    tags: [{ name: 'VIP' }],
  });
  await party('globex', {
    type: 'organisation',
    name: 'Globex',
    addresses: [{ type: 'Office', city: 'Paris', country: 'France' }],
  });
  await party('ada', {
    type: 'person',
    firstName: 'Ada',
    lastName: 'Lovelace',
    organisation: { id: ids.acme },
    emailAddresses: [
      { type: 'Work', address: 'ada@acme.example' },
      { type: 'Home', address: 'ada@home.example' },
    ],
    tags: [{ name: 'VIP' }, { name: 'Newsletter' }],
    fields: [
      { definition: { name: 'Customer since', tag: null }, value: '2021-06-01' },
      { definition: { name: 'VIP', tag: null }, value: true },
    ],
  });
  await party('evil', {
    type: 'person',
    firstName: '=HYPERLINK("http://x","click")',
    lastName: '+cmd',
    jobTitle: '@SUM(A1)',
    about: '-2+3',
  });
});

afterAll(async () => {
  await client?.close();
  await box?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function exportWith(
  flags: Omit<ExportFlags, 'cwd'>,
  account = box.url,
  signal?: AbortSignal,
): Promise<ExportSummary> {
  const options = normaliseExportOptions({ ...flags, cwd: dir });
  return runExport(options, {
    client,
    account: { baseUrl: account, account },
    now: serviceNow,
    ...(signal ? { signal } : {}),
  });
}

function csvRows(file: string): string[][] {
  return parse(readFileSync(file, 'utf8'), { bom: true, relax_column_count: true }) as string[][];
}

function names(file: string): string[] {
  const rows = csvRows(file);
  const at = (rows[0] ?? []).indexOf('name');
  return rows
    .slice(1)
    .map((r) => r[at] ?? '')
    .sort();
}

/** The text of one file inside an XLSX. */
function zipEntry(file: string, name: string): Promise<string> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (error, zip) => {
      if (error || !zip) return reject(error);
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName !== name) return zip.readEntry();
        zip.openReadStream(entry, (err, stream) => {
          if (err || !stream) return reject(err);
          let text = '';
          stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
          stream.on('end', () => {
            zip.close();
            resolve(text);
          });
        });
      });
      zip.on('end', () => reject(new Error(`no ${name} in ${file}`)));
      zip.readEntry();
    });
  });
}

describe('splitWhere', () => {
  it.each([
    ['tag is VIP', { field: 'tag', operator: 'is', value: 'VIP' }],
    ['name is not Acme Ltd', { field: 'name', operator: 'is not', value: 'Acme Ltd' }],
    ['addedOn is within last 30', { field: 'addedOn', operator: 'is within last', value: '30' }],
    [
      '"custom:Customer since" is after 2021-01-01',
      { field: 'custom:Customer since', operator: 'is after', value: '2021-01-01' },
    ],
    [
      'custom:Customer since is after 2021-01-01',
      { field: 'custom:Customer since', operator: 'is after', value: '2021-01-01' },
    ],
    ['probability is greater than 50', { field: 'probability', operator: 'is greater than', value: '50' }],
    // A value in quotes loses them, as a field does; "" is the empty text.
    ['name is "Acme Ltd"', { field: 'name', operator: 'is', value: 'Acme Ltd' }],
    ["name is 'Acme Ltd'", { field: 'name', operator: 'is', value: 'Acme Ltd' }],
    ['jobTitle is ""', { field: 'jobTitle', operator: 'is', value: '' }],
    ['name is ""quoted""', { field: 'name', operator: 'is', value: '"quoted"' }],
    ["name is O'Brien", { field: 'name', operator: 'is', value: "O'Brien" }],
    ['name is "Acme', { field: 'name', operator: 'is', value: '"Acme' }],
  ])('%s', (text, expected) => expect(splitWhere(text)).toEqual(expected));

  it.each(['name is', 'name is   ', 'addedOn is within last'])(
    '%j without a value is a usage error saying how to ask for an empty one',
    (text) => {
      expect(() => splitWhere(text)).toThrow(/no value after `is( within last)?`/);
      try {
        splitWhere(text);
      } catch (error) {
        expect((error as FerryError).code).toBe('USAGE');
        expect((error as FerryError).hint).toContain('"" for an empty value');
      }
    },
  );
});

describe('export: filters', () => {
  it.each([
    [['city is London'], ['Acme Ltd']],
    [['name starts with Glo'], ['Globex']],
    [['name ends with Ltd'], ['Acme Ltd']],
    [['name contains cme'], ['Acme Ltd']],
    [['tag is VIP', 'type is organisation'], ['Acme Ltd']],
    [['email is ada@home.example'], ['Ada Lovelace']],
    [['"custom:Customer since" is after 2021-01-01'], ['Ada Lovelace']],
    [['"custom:Customer since" is before 2021-01-01'], []],
    [
      ['addedOn is within last 1', 'type is organisation'],
      ['Acme Ltd', 'Globex'],
    ],
    [['id is greater than 0', 'country is France'], ['Globex']],
    [['type is organisation', 'name is not Globex'], ['Acme Ltd']],
    [['type is organisation', `id is less than ${Number.MAX_SAFE_INTEGER}`, 'city is not Paris'], ['Acme Ltd']],
    [['type is organisation', 'addedOn is older than 1'], []],
    // The next day counts from today, so a record added today is within it.
    [
      ['type is organisation', 'addedOn is within next 1'],
      ['Acme Ltd', 'Globex'],
    ],
    [['hasTags is true', 'type is organisation'], ['Acme Ltd']],
    [['"custom:VIP" is true'], ['Ada Lovelace']],
    [['org.name is Acme Ltd'], ['Ada Lovelace']],
  ])('--where %j', async (where, expected) => {
    const out = join(dir, 'w.csv');
    await exportWith({ entity: 'parties', out, where });
    expect(names(out)).toEqual([...expected].sort());
  });

  it('--any combines the conditions as an orGroup; --order-by sorts', async () => {
    const out = join(dir, 'any.csv');
    await exportWith({
      entity: 'parties',
      out,
      where: ['city is London', 'city is Paris'],
      any: true,
      orderBy: 'name:desc',
    });
    const rows = csvRows(out);
    const at = (rows[0] ?? []).indexOf('name');
    expect(rows.slice(1).map((r) => r[at])).toEqual(['Globex', 'Acme Ltd']);
  });

  it("a filter file in the service's shape", async () => {
    const file = join(dir, 'filter.yaml');
    writeFileSync(
      file,
      `conditions:\n  - field: type\n    operator: is\n    value: organisation\norderBy:\n  - { field: name, direction: ascending }\n`,
    );
    const out = join(dir, 'file.csv');
    await exportWith({ entity: 'parties', out, filter: file });
    expect(names(out)).toEqual(['Acme Ltd', 'Globex']);
  });

  it.each([
    [
      { entity: 'parties', out: 'x.csv', where: ['citty is London'] },
      /parties have no field "citty".*Fields: id, name, jobTitle, email/s,
      'none',
    ],
    [
      { entity: 'parties', out: 'x.csv', where: ['name is greater than 3'] },
      /`is greater than` does not apply to name.*name takes: starts with, ends with, contains, is not, is\./s,
      'none',
    ],
    [
      { entity: 'parties', out: 'x.csv', where: ['addedOn is after yesterday'] },
      /takes a date as YYYY-MM-DD, got "yesterday"/,
      'none',
    ],
    [{ entity: 'parties', out: 'x.csv', where: ['hasTags is yes'] }, /takes true or false, got "yes"/, 'none'],
    [{ entity: 'parties', out: 'x.csv', where: ['id is greater than ten'] }, /takes a number, got "ten"/, 'none'],
    [{ entity: 'parties', out: 'x.csv', where: ['addedOn is within last a week'] }, /takes a number of days/, 'none'],
    [
      { entity: 'parties', out: 'x.csv', where: ['name equals Acme'] },
      /expected FIELD OPERATOR VALUE.*Operators: /s,
      'none',
    ],
    [
      { entity: 'opportunities', out: 'x.csv', where: ['city is London'] },
      /opportunities have no field "city"/,
      'none',
    ],
    [{ entity: 'parties', out: 'x.csv', orderBy: 'colour' }, /--order-by: parties have no field "colour"/, 'none'],
    [{ entity: 'parties', out: 'x.csv', orderBy: 'name:sideways' }, /the direction is asc or desc/, 'none'],
    [{ entity: 'tasks', out: 'x.csv', where: ['name is x'] }, /tasks cannot be filtered/, 'none'],
    [{ entity: 'parties', out: 'x.xls' }, /cannot tell the format/, 'none'],
    [{ entity: 'parties', out: 'x.csv', format: 'xml' }, /--format takes csv, xlsx or jsonl/, 'none'],
    [{ entity: 'parties', out: '-', format: 'xlsx' }, /XLSX cannot go to standard output/, 'none'],
    [
      { entity: 'parties', out: 'x.csv', format: 'xlsx' },
      /--format xlsx disagrees with the extension of x.csv \(csv\).*Name the file .xlsx, or leave --format out/s,
      'none',
    ],
    [
      { entity: 'parties', out: 'x.xlsx', format: 'jsonl' },
      /--format jsonl disagrees with the extension of x.xlsx \(xlsx\)/,
      'none',
    ],
    [
      { entity: 'widgets', out: 'x.csv' },
      /export needs an ENTITY: parties, opportunities, kases, entries, tasks/,
      'none',
    ],
    [
      { entity: 'entries', out: 'x.csv', since: 'auto', state: 's.json' },
      /--since works for parties, opportunities and kases/,
      'none',
    ],
    [{ entity: 'parties', out: 'x.csv', since: 'auto' }, /--since auto needs --state FILE/, 'none'],
    [{ entity: 'parties', out: 'x.csv', since: 'last tuesday' }, /--since takes auto, a date/, 'none'],
    // Date.parse takes these for 2001, 2001 and 2 March.
    [
      { entity: 'parties', out: 'x.csv', since: '1' },
      /--since takes auto, a date \(YYYY-MM-DD\) or a timestamp, got "1"/,
      'none',
    ],
    [{ entity: 'parties', out: 'x.csv', since: 'Nov 24' }, /--since takes auto, a date/, 'none'],
    [{ entity: 'parties', out: 'x.csv', since: '2026-02-30' }, /--since takes auto, a date/, 'none'],
    [
      { entity: 'parties', out: 'x.csv', columns: 'id', mapping: ['m.yaml'] },
      /give --columns or --mapping, not both/,
      'none',
    ],
    [{ entity: 'parties', out: 'x.jsonl', mapping: ['m.yaml'] }, /JSON Lines holds whole records/, 'none'],
    [{ entity: 'parties', out: 'x.csv', columns: 'id,name,ID' }, /--columns names "ID" twice/, 'none'],
    [
      { entity: 'opportunities', out: 'x.csv', where: ['"org.custom:VIP" is true'] },
      /opportunities have no field "org.custom:VIP".*in an export of parties; use custom:NAME/s,
      'none',
    ],
    // These need the account's names: those the export uses are read (the parties' custom fields,
    // and the users or teams a condition names), never a record.
    [
      { entity: 'parties', out: 'x.csv', where: ['"custom:Nope" is 1'] },
      /no custom field "Nope".*Custom fields: .*Customer since/s,
      1,
    ],
    [
      { entity: 'parties', out: 'x.csv', where: ['"custom:Customer since" is greater than 3'] },
      /`is greater than` does not apply to custom:Customer since/,
      1,
    ],
    [
      { entity: 'parties', out: 'x.csv', where: ['owner is nobody'] },
      /no user "nobody" in the account.*Users: admin/s,
      2,
    ],
    [
      { entity: 'parties', out: 'x.csv', where: ['team is Nobody'] },
      /no team "Nobody" in the account.*Teams: Sales, Support/s,
      2,
    ],
    [
      { entity: 'parties', out: 'x.csv', columns: 'id,colour' },
      /parties have no column "colour".*Columns: id, type, name/s,
      1,
    ],
  ])('refuses %j, naming the valid choices', async (flags, message, requests) => {
    const before = client.transport.requestsSent;
    const error = await exportWith(flags as Omit<ExportFlags, 'cwd'>).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FerryError);
    expect((error as FerryError).code).toBe('USAGE');
    expect(`${(error as FerryError).message} ${(error as FerryError).hint ?? ''}`).toMatch(message);
    const sent = client.transport.requestsSent - before;
    expect(sent).toBe(requests === 'none' ? 0 : requests);
    expect(existsSync(join(dir, 'x.csv'))).toBe(false);
  });
});

describe('export: columns and formats', () => {
  it('CSV: BOM, CRLF, flattened contacts, tags, custom fields as columns; --plain drops BOM and CR', async () => {
    const out = join(dir, 'all.csv');
    const summary = await exportWith({ entity: 'parties', out, where: ['email is ada@acme.example'] });
    expect(summary.records).toBe(1);
    const text = readFileSync(out, 'utf8');
    expect(text.startsWith('\uFEFFid,type,name,')).toBe(true);
    expect(text).toContain('\r\n');
    const [header, row] = csvRows(out) as [string[], string[]];
    const cell = (name: string): string | undefined => row[header.indexOf(name)];
    expect(cell('email')).toBe('ada@acme.example');
    expect(cell('otherEmails')).toBe('ada@home.example');
    expect(cell('organisation')).toBe('Acme Ltd');
    expect(cell('tags')?.split(';').sort()).toEqual(['Newsletter', 'VIP']);
    expect(cell('Customer since')).toBe('2021-06-01');
    expect(cell('VIP')).toBe('true');
    const plain = join(dir, 'plain.csv');
    await exportWith({ entity: 'parties', out: plain, plain: true, columns: 'id,name' });
    const plainText = readFileSync(plain, 'utf8');
    expect(plainText.startsWith('id,name\n')).toBe(true);
    expect(plainText).not.toContain('\r');
  });

  it('formula-looking texts are written as text in CSV and XLSX, and as they are with --raw', async () => {
    const csv = join(dir, 'evil.csv');
    await exportWith({
      entity: 'parties',
      out: csv,
      where: ['jobTitle is @SUM(A1)'],
      columns: 'firstName,lastName,jobTitle,about',
    });
    const [, row] = csvRows(csv) as [string[], string[]];
    expect(row).toEqual(['\'=HYPERLINK("http://x","click")', "'+cmd", "'@SUM(A1)", "'-2+3"]);
    const raw = join(dir, 'raw.csv');
    await exportWith({ entity: 'parties', out: raw, where: ['jobTitle is @SUM(A1)'], columns: 'lastName', raw: true });
    expect(csvRows(raw)[1]).toEqual(['+cmd']);

    const xlsx = join(dir, 'evil.xlsx');
    await exportWith({
      entity: 'parties',
      out: xlsx,
      where: ['jobTitle is @SUM(A1)'],
      columns: 'firstName,lastName,jobTitle,about,id',
    });
    const rows = [];
    for await (const item of readXlsx(xlsx)) rows.push(item);
    // The visible text is unchanged; the cells are text (inline strings with the quote-prefix style).
    expect(rows[0]).toMatchObject({
      kind: 'row',
      values: {
        firstName: '=HYPERLINK("http://x","click")',
        lastName: '+cmd',
        jobTitle: '@SUM(A1)',
        about: '-2+3',
        id: ids.evil,
      },
    });
    const sheet = await zipEntry(xlsx, 'xl/worksheets/sheet1.xml');
    expect(sheet).not.toContain('<f>');
    for (const column of ['A', 'B', 'C', 'D'])
      expect(sheet).toMatch(new RegExp(`<c r="${column}2" t="inlineStr" s="4">`));
    // The id is a number, not a text that looks like one.
    expect(sheet).toMatch(/<c r="E2"><v>\d+<\/v><\/c>/);
    expect(await zipEntry(xlsx, 'xl/styles.xml')).toMatch(/<xf numFmtId="49"[^>]*quotePrefix="1"\/><\/cellXfs>/);
    const rawXlsx = join(dir, 'raw.xlsx');
    await exportWith({
      entity: 'parties',
      out: rawXlsx,
      where: ['jobTitle is @SUM(A1)'],
      columns: 'firstName',
      raw: true,
    });
    expect(await zipEntry(rawXlsx, 'xl/worksheets/sheet1.xml')).toContain(
      '<c r="A2" t="inlineStr"><is><t>=HYPERLINK(&quot;http://x&quot;,&quot;click&quot;)</t></is></c>',
    );
  });

  it.each([
    ['\tTabbed', "'\tTabbed"],
    ['\rReturned', "'\rReturned"],
    ['\uFF1D1+1 (full-width =)', "'\uFF1D1+1 (full-width =)"],
    ['-', "'-"],
    ['a - b = c', 'a - b = c'],
    [' =1+1 (a space first)', ' =1+1 (a space first)'],
  ])('CSV: %j is written as %j', async (about, written) => {
    const party = await box.v2('POST', '/parties', {
      party: { type: 'organisation', name: 'Formula Test Ltd', about },
    });
    expect(party.status).toBe(201);
    try {
      const out = join(dir, 'formula.csv');
      await exportWith({ entity: 'parties', out, where: [`id is ${party.body.party.id}`], columns: 'about' });
      expect(csvRows(out)[1]).toEqual([written]);
    } finally {
      await box.v2('DELETE', `/parties/${party.body.party.id}`);
    }
  });

  it('CSV: a text of several lines stays one row (quoted), in CRLF and in --plain files', async () => {
    const party = await box.v2('POST', '/parties', {
      party: { type: 'organisation', name: 'Multi Line Ltd', about: 'first line\nsecond line\rthird' },
    });
    try {
      for (const plain of [false, true]) {
        const out = join(dir, `lines-${plain}.csv`);
        await exportWith({
          entity: 'parties',
          out,
          where: [`id is ${party.body.party.id}`],
          columns: 'name,about',
          plain,
        });
        expect(csvRows(out)).toEqual([
          ['name', 'about'],
          ['Multi Line Ltd', 'first line\nsecond line\rthird'],
        ]);
      }
    } finally {
      await box.v2('DELETE', `/parties/${party.body.party.id}`);
    }
  });

  it('XLSX as exceljs reads it: typed cells, a bold frozen header, an auto-filter over the rows, widths from the contents', async () => {
    const out = join(dir, 'exceljs.xlsx');
    await exportWith({
      entity: 'parties',
      out,
      where: ['email is ada@acme.example'],
      columns: 'id,name,email,about,VIP,Customer since,createdAt',
    });
    const { default: ExcelJS } = await import('exceljs');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(out);
    const sheet = workbook.getWorksheet('Export');
    expect(sheet).toBeDefined();
    if (!sheet) return;
    expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    expect(sheet.autoFilter).toBe('A1:G2');
    const header = sheet.getRow(1);
    expect(header.values).toEqual([undefined, 'id', 'name', 'email', 'about', 'VIP', 'Customer since', 'createdAt']);
    expect(header.getCell(1).font?.bold).toBe(true);
    const row = sheet.getRow(2);
    expect(row.getCell(1).value).toBe(ids.ada);
    expect(row.getCell(2).value).toBe('Ada Lovelace');
    expect(row.getCell(5).value).toBe(true);
    expect(row.getCell(6).value).toEqual(new Date('2021-06-01T00:00:00Z'));
    expect(row.getCell(6).numFmt).toBe('yyyy-mm-dd');
    expect(row.getCell(7).value).toBeInstanceOf(Date);
    expect(row.getCell(7).numFmt).toBe('yyyy-mm-dd hh:mm:ss');
    // Sized from the header and the rows: the e-mail column is wider than the id column.
    const width = (i: number): number => sheet.getColumn(i).width ?? 0;
    expect(width(1)).toBe(Math.max('id'.length, String(ids.ada).length) + 2);
    expect(width(3)).toBe('ada@acme.example'.length + 2);
  });

  it('XLSX reads back with typed cells: numbers, dates, booleans, a bold frozen header and an auto-filter', async () => {
    const out = join(dir, 'typed.xlsx');
    await exportWith({ entity: 'parties', out, where: ['email is ada@acme.example'] });
    expect(await listXlsxSheets(out)).toEqual(['Export']);
    const rows = [];
    for await (const item of readXlsx(out)) rows.push(item);
    const values = (rows[0] as { values: Record<string, unknown> }).values;
    expect(values.id).toBe(ids.ada);
    expect(values.VIP).toBe(true);
    expect(values['Customer since']).toBeInstanceOf(Date);
    expect((values['Customer since'] as Date).toISOString().slice(0, 10)).toBe('2021-06-01');
    expect(values.createdAt).toBeInstanceOf(Date);
    expect(values.email).toBe('ada@acme.example');
    expect(values).toMatchObject({ organisation: 'Acme Ltd', 'organisation.id': ids.acme });
    const sheet = await zipEntry(out, 'xl/worksheets/sheet1.xml');
    expect(sheet).toContain('<pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>');
    expect(sheet).toMatch(/<autoFilter ref="A1:[A-Z]+2"\/>/);
    expect(sheet).toMatch(/<c r="A1" t="inlineStr" s="1">/);
    expect(await zipEntry(out, 'xl/styles.xml')).toContain('<font><b/>');
  });

  it('reads only the names it uses: the custom fields of its entity, and the users or teams a condition names', async () => {
    // Each export reads one page of records (this account holds fewer than 100 of each); the rest
    // of each count is the names: a request for each list.
    const cases: Array<[Omit<ExportFlags, 'cwd'>, number]> = [
      [{ entity: 'parties', out: 'names.csv', where: ['city is Paris'] }, 1 + 1],
      [{ entity: 'parties', out: 'names.csv', where: ['owner is admin', 'city is Paris'] }, 2 + 1],
      [{ entity: 'parties', out: 'names.csv', where: ['owner is 1'] }, 1 + 1],
      [{ entity: 'parties', out: 'names.csv', where: ['team is Sales'] }, 2 + 1],
      [{ entity: 'parties', out: 'names.csv', where: ['"org.custom:Customer since" is 2021-06-01'] }, 1 + 1],
      [{ entity: 'opportunities', out: 'names.csv', where: ['owner is admin'] }, 2 + 1],
      [{ entity: 'tasks', out: 'names.csv' }, 0 + 1],
    ];
    for (const [flags, requests] of cases) {
      const before = client.transport.requestsSent;
      await exportWith(flags);
      expect(client.transport.requestsSent - before, JSON.stringify(flags)).toBe(requests);
    }
  });

  it('JSON Lines hold the records as the service returns them; --out - writes to standard output', async () => {
    const { code, stdout } = await runCli([
      'export',
      'parties',
      '--out',
      '-',
      '--format',
      'jsonl',
      '--where',
      'city is Paris',
      '--base-url',
      box.url,
      '--token',
      box.token,
    ]);
    expect(code).toBe(0);
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ id: ids.globex, name: 'Globex', type: 'organisation' });
  });

  it('--out - writes CSV to standard output: no BOM, the summary on standard error', async () => {
    const { code, stdout, stderr } = await runCli([
      'export',
      'parties',
      '--out',
      '-',
      '--columns',
      'id,name',
      '--where',
      'city is Paris',
      '--base-url',
      box.url,
      '--token',
      box.token,
    ]);
    expect(code, stderr).toBe(0);
    expect(stdout).toBe(`id,name\r\n${ids.globex},Globex\r\n`);
    expect(stderr).toMatch(/^Exported 1 record, \d+ requests, /);
  });

  it.each([
    [['--where', 'tag is Nope'], /^No record matched the filter\. Tag names are not checked before the export/m],
    [['--where', 'city is Atlantis'], /^No record matched the filter\.$/m],
  ])('an empty result of %j says that no record matched', async (filter, note) => {
    const { code, stdout, stderr } = await runCli([
      'export',
      'parties',
      '--out',
      '-',
      '--columns',
      'id,name',
      ...filter,
      '--base-url',
      box.url,
      '--token',
      box.token,
    ]);
    expect(code, stderr).toBe(0);
    expect(stdout).toBe('id,name\r\n');
    expect(stderr).toMatch(/^Exported 0 records, /);
    expect(stderr).toMatch(note);
  });

  it('--since DATE: what changed since then, and the ids deleted since then beside it', async () => {
    const gone = await box.v2('POST', '/parties', { party: { type: 'organisation', name: 'Gone Tomorrow Ltd' } });
    await box.v2('DELETE', `/parties/${gone.body.party.id}`);
    const out = join(dir, 'since-date.csv');
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const summary = await exportWith({ entity: 'parties', out, since: yesterday, columns: 'id,name' });
    expect(summary.since).toBe(`${yesterday}T00:00:00.000Z`);
    expect(names(out)).toEqual(expect.arrayContaining(['Acme Ltd', 'Globex']));
    expect(
      csvRows(join(dir, 'since-date.deleted.csv'))
        .slice(1)
        .map((r) => Number(r[0])),
    ).toContain(gone.body.party.id);
    const future = await exportWith({ entity: 'parties', out, since: '2099-01-01', columns: 'id,name' });
    expect(future.records).toBe(0);
    expect(csvRows(out)).toEqual([['id', 'name']]);
  });

  it('the next page is asked for before the current one is written', async () => {
    const own = await startTestSandbox();
    const ownClient = new CrmClient({ baseUrl: own.url, auth: own.token });
    try {
      for (let i = 0; i < 250; i += 1)
        addParty(own.store, { type: 'organisation', firstName: null, lastName: null, name: `Paged ${i}` });
      const requestsAt: Record<number, number> = {};
      const summary = await runExport(
        normaliseExportOptions({ entity: 'parties', out: join(dir, 'paged.csv'), columns: 'id', cwd: dir }),
        {
          client: ownClient,
          account: { baseUrl: own.url, account: own.url },
          onEvent: (p) => (requestsAt[p.records] = p.requests),
        },
      );
      expect(summary.records).toBe(250);
      // Three pages: when the first page's last record is written, the second page has been asked
      // for, and when the second's is, the third (the last request of the export).
      expect(requestsAt[100]).toBe(summary.requests - 1);
      expect(requestsAt[200]).toBe(summary.requests);
    } finally {
      await ownClient.close();
      await own.close();
    }
  });

  it('entries and tasks export through their lists', async () => {
    await box.v2('POST', '/entries', { entry: { type: 'note', party: { id: ids.ada }, content: 'Met at the fair' } });
    await box.v2('POST', '/tasks', { task: { description: 'Call Ada', party: { id: ids.ada }, dueOn: '2031-01-01' } });
    const notes = join(dir, 'entries.csv');
    await exportWith({ entity: 'entries', out: notes });
    expect(readFileSync(notes, 'utf8')).toContain('Met at the fair');
    const tasks = join(dir, 'tasks.csv');
    await exportWith({ entity: 'tasks', out: tasks });
    const [header, row] = csvRows(tasks) as [string[], string[]];
    expect(row[header.indexOf('description')]).toBe('Call Ada');
    expect(row[header.indexOf('party')]).toBe('Ada Lovelace');
  });
});

describe('export: filter files', () => {
  it('JSON, with an orGroup and a descending order', async () => {
    const file = join(dir, 'filter.json');
    writeFileSync(
      file,
      JSON.stringify({
        filter: {
          conditions: [
            { field: 'type', operator: 'is', value: 'organisation' },
            {
              orGroup: [
                { field: 'city', operator: 'is', value: 'London' },
                { field: 'city', operator: 'is', value: 'Paris' },
              ],
            },
          ],
          orderBy: [{ field: 'name', direction: 'descending' }],
        },
      }),
    );
    const out = join(dir, 'file-json.csv');
    await exportWith({ entity: 'parties', out, filter: file });
    const rows = csvRows(out);
    expect(rows.slice(1).map((r) => r[(rows[0] ?? []).indexOf('name')])).toEqual(['Globex', 'Acme Ltd']);
  });

  it.each([
    ['conditions: nope\n', /a filter has `conditions`/],
    [
      'conditions:\n  - { field: colour, operator: is, value: red }\n',
      /conditions\[0\]: parties have no field "colour"/,
    ],
    ['conditions:\n  - { field: name, operator: equals, value: x }\n', /conditions\[0\]: unknown operator "equals"/],
    [
      'conditions:\n  - orGroup:\n      - { field: name, operator: is after, value: 2021-01-01 }\n',
      /conditions\[0\]\.orGroup\[0\]: `is after` does not apply to name/,
    ],
    [
      'conditions:\n  - { field: addedOn, operator: is within last, value: a week }\n',
      /addedOn `is within last` takes a number of days, got "a week"/,
    ],
    ['conditions:\n  - { field: hasTags, operator: is, value: yes }\n', /hasTags `is` takes true or false, got "yes"/],
    [
      'conditions:\n  - { field: addedOn, operator: is after, value: 1/2/2021 }\n',
      /addedOn `is after` takes a date as YYYY-MM-DD/,
    ],
    ['conditions: [\n', /does not parse/],
  ])('refuses %j before any request', async (text, message) => {
    const file = join(dir, 'bad-filter.yaml');
    writeFileSync(file, text);
    const before = client.transport.requestsSent;
    const error = await exportWith({ entity: 'parties', out: join(dir, 'x.csv'), filter: file }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((error as FerryError).code).toBe('USAGE');
    expect(`${(error as FerryError).message} ${(error as FerryError).hint ?? ''}`).toMatch(message);
    expect(client.transport.requestsSent - before).toBe(0);
  });
});

describe('export: opportunities and projects', () => {
  let proposal: number;
  beforeAll(async () => {
    const milestones = (await box.v2('GET', '/milestones')).body.milestones as Array<{ id: number; name: string }>;
    proposal = milestones.find((m) => m.name === 'Proposal')?.id as number;
    const newOne = milestones.find((m) => m.name === 'New')?.id as number;
    const post = async (opportunity: Record<string, unknown>): Promise<void> => {
      const answer = await box.v2('POST', '/opportunities', { opportunity });
      expect(answer.status, answer.text).toBe(201);
    };
    await post({
      name: 'Big deal',
      party: { id: ids.acme },
      milestone: { id: proposal },
      value: { amount: 25000.5, currency: 'GBP' },
      expectedCloseOn: '2031-03-31',
      tags: [{ name: 'VIP' }],
    });
    await post({
      name: 'Small deal',
      party: { id: ids.ada },
      milestone: { id: newOne },
      value: { amount: 500, currency: 'EUR' },
    });
    const kase = await box.v2('POST', '/kases', {
      kase: { name: 'Onboarding Acme', party: { id: ids.acme }, description: 'Set them up' },
    });
    expect(kase.status, kase.text).toBe(201);
  });

  it('opportunities: party and milestone by name, the amount a number and its currency, dates as dates', async () => {
    const out = join(dir, 'opportunities.xlsx');
    await exportWith({ entity: 'opportunities', out, where: ['milestone is Proposal'] });
    const rows = [];
    for await (const item of readXlsx(out)) rows.push(item);
    expect(rows).toHaveLength(1);
    const values = (rows[0] as { values: Record<string, unknown> }).values;
    expect(values).toMatchObject({
      name: 'Big deal',
      party: 'Acme Ltd',
      'party.id': ids.acme,
      milestone: 'Proposal',
      amount: 25000.5,
      currency: 'GBP',
      tags: 'VIP',
    });
    expect(values.expectedCloseOn).toBeInstanceOf(Date);
    expect((values.expectedCloseOn as Date).toISOString().slice(0, 10)).toBe('2031-03-31');
  });

  it.each([
    [['pipeline is Sales'], ['Big deal', 'Small deal']],
    [['probability is greater than 30'], ['Big deal']],
    [['currency is EUR'], ['Small deal']],
    [['tag is VIP'], ['Big deal']],
    [
      ['owner is admin', 'name ends with deal'],
      ['Big deal', 'Small deal'],
    ],
    [['isOpen is true', 'name starts with Small'], ['Small deal']],
    // The service's filter cannot compare amounts: checked here, on what the other conditions let through.
    [['value is greater than 1000'], ['Big deal']],
    [['amount is less than 1000'], ['Small deal']],
    [['value is greater than 100', 'currency is EUR'], ['Small deal']],
    [['value is greater than 250000'], []],
    // Equality the service can check, as its expectedValue.
    [['value is 500'], ['Small deal']],
  ])('opportunities --where %j', async (where, expected) => {
    const out = join(dir, 'opportunities.csv');
    await exportWith({ entity: 'opportunities', out, where });
    expect(names(out)).toEqual(expected);
  });

  it('amounts compared here: the summary says how many records were read for it; --any joins such conditions', async () => {
    const { code, stdout } = await runCli([
      'export',
      'opportunities',
      '--out',
      join(dir, 'big.csv'),
      '--where',
      'value is greater than 20000',
      '--where',
      'currency is GBP',
      '--base-url',
      box.url,
      '--token',
      box.token,
    ]);
    expect(code).toBe(0);
    // Only the GBP deal came from the service; its amount was compared here.
    expect(stdout).toContain('Exported 1 record,');
    expect(stdout).toContain(
      'Read 1 record to check "value is greater than 20000" here: the service\'s filter cannot compare amounts.',
    );
    const out = join(dir, 'either.csv');
    const either = await exportWith({
      entity: 'opportunities',
      out,
      where: ['value is greater than 20000', 'value is less than 600'],
      any: true,
    });
    expect(names(out)).toEqual(['Big deal', 'Small deal']);
    expect(either.checkedHere).toEqual(['value is greater than 20000', 'value is less than 600']);
  });

  it.each([
    [
      { where: ['value is greater than 20000', 'currency is GBP'], any: true },
      /--any cannot join "value is greater than 20000" \(checked here/,
    ],
    [{ where: ['value contains 5'] }, /`contains` does not apply to value/],
    [{ where: ['value is greater than lots'] }, /the field takes a number, got "lots"/],
  ])('amount conditions that cannot be checked are refused before any request: %j', async (flags, message) => {
    const before = client.transport.requestsSent;
    const error = await exportWith({ entity: 'opportunities', out: join(dir, 'x.csv'), ...flags }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((error as FerryError).code).toBe('USAGE');
    expect((error as FerryError).message).toMatch(message);
    expect(client.transport.requestsSent - before).toBe(0);
  });

  it('projects (kases): party by name, a filter on them', async () => {
    const out = join(dir, 'kases.csv');
    await exportWith({ entity: 'kases', out, where: ['name contains Onboarding', 'isOpen is true'] });
    const [header, row, more] = csvRows(out) as [string[], string[], string[] | undefined];
    expect(more).toBeUndefined();
    expect(row[header.indexOf('party')]).toBe('Acme Ltd');
    // The id beside the name: two parties of one name are told apart, and a lookup joins on it.
    expect(header.indexOf('party.id')).toBe(header.indexOf('party') + 1);
    expect(row[header.indexOf('party.id')]).toBe(String(ids.acme));
    expect(row[header.indexOf('description')]).toBe('Set them up');
  });
});

describe('export: nightly incremental exports', () => {
  /** What one night's export holds: the names exported and the ids said deleted, whatever the format. */
  async function night(format: 'csv' | 'xlsx' | 'jsonl', out: string): Promise<{ names: string[]; deleted: number[] }> {
    if (format === 'csv')
      return {
        names: names(out),
        deleted: csvRows(out.replace(/\.csv$/, '.deleted.csv'))
          .slice(1)
          .map((r) => Number(r[0])),
      };
    if (format === 'jsonl') {
      const lines = (file: string): Array<Record<string, unknown>> =>
        readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l));
      return {
        names: lines(out)
          .map((r) => String(r.name ?? `${r.firstName} ${r.lastName}`))
          .sort(),
        deleted: lines(out.replace(/\.jsonl$/, '.deleted.jsonl')).map((r) => r.id as number),
      };
    }
    expect(await listXlsxSheets(out)).toEqual(['Export', 'Deleted']);
    const rows = async (sheet: string): Promise<Array<Record<string, unknown>>> => {
      const found: Array<Record<string, unknown>> = [];
      for await (const item of readXlsx(out, { sheet })) if (item.kind === 'row') found.push(item.values);
      return found;
    };
    const deleted = await rows('Deleted');
    for (const row of deleted) expect(row.deletedAt).toBeInstanceOf(Date);
    return {
      names: (await rows('Export')).map((r) => String(r.name)).sort(),
      deleted: deleted.map((r) => r.id as number),
    };
  }

  /**
   * The state overlaps by five minutes (clock differences): move its window to the next whole
   * second (the service stamps changes to the second), so that the next run sees only what
   * changes from now on.
   */
  async function closeTheWindow(state: string): Promise<void> {
    const saved = JSON.parse(readFileSync(state, 'utf8'));
    const next = Math.floor(serviceNow().getTime() / 1000) * 1000 + 1000;
    saved.since = new Date(next).toISOString();
    writeFileSync(state, JSON.stringify(saved));
    ahead += next - serviceNow().getTime() + 50;
  }

  it.each(['csv', 'xlsx', 'jsonl'] as const)(
    '--since auto across three runs (%s): everything, then the changes and the deletions of each day, never another account',
    async (format) => {
      const out = join(dir, `nightly.${format}`);
      const state = join(dir, `nightly-${format}.state.json`);
      const first = await exportWith({ entity: 'parties', out, since: 'auto', state });
      expect(first.since).toBeNull();
      const firstNight = await night(format, out);
      expect(firstNight.names.length).toBe(first.records);
      expect(firstNight.names).toEqual(expect.arrayContaining(['Acme Ltd', 'Globex']));
      expect(firstNight.deleted).toEqual([]);

      const kept = await box.v2('POST', '/parties', { party: { type: 'organisation', name: `Kept ${format} Ltd` } });
      await closeTheWindow(state);
      await box.v2('PUT', `/parties/${ids.globex}`, { party: { about: `changed tonight (${format})` } });
      const gone = await box.v2('POST', '/parties', { party: { type: 'organisation', name: 'Short-lived Ltd' } });
      await box.v2('DELETE', `/parties/${gone.body.party.id}`);
      const second = await exportWith({ entity: 'parties', out, since: 'auto', state });
      expect(second.since).not.toBeNull();
      expect(await night(format, out)).toEqual({ names: ['Globex'], deleted: [gone.body.party.id] });

      await closeTheWindow(state);
      await box.v2('PUT', `/parties/${kept.body.party.id}`, { party: { about: 'changed the next day' } });
      await box.v2('DELETE', `/parties/${kept.body.party.id}`);
      await box.v2('PUT', `/parties/${ids.acme}`, { party: { about: `changed on the third day (${format})` } });
      const third = await exportWith({ entity: 'parties', out, since: 'auto', state });
      expect(third.records).toBe(1);
      expect(await night(format, out)).toEqual({ names: ['Acme Ltd'], deleted: [kept.body.party.id] });

      const stateBefore = readFileSync(state, 'utf8');
      const error = await exportWith({ entity: 'parties', out, since: 'auto', state }, 'https://other.example').then(
        () => null,
        (e: unknown) => e,
      );
      expect((error as FerryError).message).toMatch(
        /belongs to .* and this export is connected to https:\/\/other.example/,
      );
      expect(readFileSync(state, 'utf8')).toBe(stateBefore);
    },
  );

  it.each([
    ['the list', []],
    ['a filter', ['name starts with Boundary']],
  ])(
    'through %s: a record changed while an export runs is exported again by the next one, the others not',
    async (_, where) => {
      // An account of its own, so that the first page holds the record that changes.
      let ownAhead = 0;
      const ownNow = (): number => Date.now() + ownAhead;
      const own = await startTestSandbox({ now: () => new Date(ownNow()) });
      const ownClient = new CrmClient({ baseUrl: own.url, auth: own.token });
      try {
        const created: number[] = [];
        for (let i = 0; i < 150; i += 1)
          created.push(
            (
              await own.v2('POST', '/parties', {
                party: { type: 'organisation', name: `Boundary ${i}`, about: 'as created' },
              })
            ).body.party.id,
          );
        const first = created[0] as number;
        // The service stamps changes to the second: the records above fall out of the next window.
        ownAhead += 2_100;
        const out = join(dir, 'boundary.csv');
        const state = join(dir, `boundary-${where.length}.state.json`);
        const options = normaliseExportOptions({
          entity: 'parties',
          out,
          since: 'auto',
          state,
          where,
          columns: 'id,about',
          cwd: dir,
        });
        let change: Promise<unknown> | null = null;
        let readings = 0;
        await runExport(options, {
          client: ownClient,
          account: { baseUrl: own.url, account: own.url },
          // The window overlaps by one second instead of five minutes (clocks that agree), so that
          // the next run can tell the records apart; and the export takes ten minutes: any reading
          // of the clock after the first is that much later.
          now: () => new Date(ownNow() + 5 * 60_000 - 1_000 + (readings++ === 0 ? 0 : 10 * 60_000)),
          // After the first 100 records are written (the first among them), it changes.
          onEvent: () => {
            change ??= own.v2('PUT', `/parties/${first}`, { party: { about: 'changed during the export' } });
          },
        });
        await change;
        const aboutOf = (id: number): string | undefined => csvRows(out).find((r) => Number(r[0]) === id)?.[1];
        expect(aboutOf(first)).toBe('as created');
        expect(csvRows(out)).toHaveLength(151);
        await runExport(options, {
          client: ownClient,
          account: { baseUrl: own.url, account: own.url },
          now: () => new Date(ownNow()),
        });
        expect(csvRows(out).slice(1)).toEqual([[String(first), 'changed during the export']]);
      } finally {
        await ownClient.close();
        await own.close();
      }
    },
    30_000,
  );

  it('the temporary files of exports whose process was killed are removed by the next export into the folder', async () => {
    const out = join(dir, 'killed.csv');
    // What a process killed with SIGKILL leaves: its temporary file, named after it (no such pid lives).
    const dead = 2 ** 22 + 11;
    const stale = join(dir, `.killed.csv.${dead}.1.tmp`);
    // Of another export into the same folder, and of its deleted ids: the next export may be of any name.
    const staleOther = join(dir, `.nightly.xlsx.${dead}.2.tmp`);
    const staleDeleted = join(dir, `.nightly.deleted.csv.${dead}.3.tmp`);
    const live = join(dir, `.killed.csv.${process.pid}.999.tmp`);
    const liveOther = join(dir, `.other.csv.${process.pid}.998.tmp`);
    const notOurs = join(dir, '.notes.tmp');
    for (const file of [stale, staleOther, staleDeleted]) writeFileSync(file, 'id,name\r\n1,half');
    for (const file of [live, liveOther, notOurs]) writeFileSync(file, 'someone is writing this');
    await exportWith({ entity: 'parties', out, columns: 'id' });
    for (const file of [stale, staleOther, staleDeleted]) expect(existsSync(file), file).toBe(false);
    for (const file of [live, liveOther, notOurs]) expect(existsSync(file), file).toBe(true);
    for (const file of [live, liveOther, notOurs]) rmSync(file);
  });

  it('an export interrupted half-way leaves no file, keeps the earlier one and the state', async () => {
    for (let i = 0; i < 250; i += 1)
      await box.v2('POST', '/parties', { party: { type: 'organisation', name: `Filler ${i}` } });
    const out = join(dir, 'kept.csv');
    const state = join(dir, 'kept.state.json');
    await exportWith({ entity: 'parties', out, since: 'auto', state });
    const before = readFileSync(out, 'utf8');
    const stateBefore = readFileSync(state, 'utf8');
    const controller = new AbortController();
    const options = normaliseExportOptions({ entity: 'parties', out, since: 'auto', state, cwd: dir });
    writeFileSync(state, JSON.stringify({ ...JSON.parse(stateBefore), since: '2000-01-01T00:00:00.000Z' }));
    const stateMid = readFileSync(state, 'utf8');
    const summary = await runExport(options, {
      client,
      account: { baseUrl: box.url, account: box.url },
      signal: controller.signal,
      onEvent: () => controller.abort(),
    });
    expect(summary.interrupted).toBe(true);
    expect(readFileSync(out, 'utf8')).toBe(before);
    expect(readFileSync(state, 'utf8')).toBe(stateMid);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(existsSync(out)).toBe(true);
  });
});

describe('export: where the file goes', () => {
  async function refusal(flags: Omit<ExportFlags, 'cwd'>): Promise<FerryError> {
    const requests = client.transport.requestsSent;
    const error = await exportWith(flags).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FerryError);
    // Found before any request.
    expect(client.transport.requestsSent).toBe(requests);
    return error as FerryError;
  }

  it('a folder that does not exist is a usage error naming it, before any request', async () => {
    const error = await refusal({ entity: 'parties', out: 'no-such-folder/parties.csv' });
    expect(error.code).toBe('USAGE');
    expect(error.message).toContain(`the folder ${join(dir, 'no-such-folder')} does not exist`);
  });

  it('a folder given as --out is refused, and the folder stays as it was', async () => {
    const folder = join(dir, 'a-folder');
    mkdirSync(folder);
    const error = await refusal({ entity: 'parties', out: folder, format: 'csv' });
    expect(error.code).toBe('USAGE');
    expect(error.message).toContain('it is a folder');
    expect(statSync(folder).isDirectory()).toBe(true);
  });

  it('a pipe, or a link to a device, is refused and stays what it was (renaming onto /dev/full replaced the device)', async () => {
    const fifo = join(dir, 'a-pipe.csv');
    execFileSync('mkfifo', [fifo]);
    const error = await refusal({ entity: 'parties', out: fifo });
    expect(error.code).toBe('USAGE');
    expect(error.message).toContain('not a regular file');
    expect(error.hint).toContain('--out -');
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    const link = join(dir, 'to-null.csv');
    symlinkSync('/dev/null', link);
    await refusal({ entity: 'parties', out: link });
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });

  it('a link to a file: the file it names is replaced, and the link stays', async () => {
    const real = join(dir, 'linked-real.csv');
    const link = join(dir, 'linked.csv');
    writeFileSync(real, 'old');
    symlinkSync(real, link);
    const summary = await exportWith({ entity: 'parties', out: link, columns: 'id' });
    expect(summary.files).toEqual([real]);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, 'utf8')).toMatch(/^\uFEFFid\r\n/);
  });
});

describe('export: a damaged state', () => {
  it.each([
    ['not JSON', '{"format":1,', /is damaged \(/],
    ['a list', '[]', /is damaged \(unexpected content\)/],
    [
      'a time that is not one',
      JSON.stringify({
        format: 1,
        account: 'ACCOUNT',
        entity: 'parties',
        query: '{"entity":"parties","filter":null,"columns":null}',
        since: 'garbage',
      }),
      /is damaged \(its time "garbage" is not a timestamp\)/,
    ],
  ])('%s is refused before any record is read (exit 2), not sent to the service', async (_what, text, message) => {
    const state = join(dir, 'damaged.state.json');
    writeFileSync(state, text.replace('ACCOUNT', box.url));
    const error = await exportWith({ entity: 'parties', out: 'damaged.csv', since: 'auto', state }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FerryError);
    expect((error as FerryError).code).toBe('EXPORT_WRITE');
    expect((error as FerryError).message).toMatch(message);
    expect((error as FerryError).hint).toMatch(/Remove it/);
    expect(existsSync(join(dir, 'damaged.csv'))).toBe(false);
  });
});

describe('export: a text longer than a spreadsheet cell', () => {
  it('XLSX: the summary warns that it was cut, and names the formats that keep it whole', async () => {
    await box.v2('POST', '/parties', {
      party: { type: 'organisation', name: 'Long About', about: 'z'.repeat(40_000) },
    });
    const out = join(dir, 'long-about.xlsx');
    const { code, stdout, stderr } = await runCli([
      'export',
      'parties',
      '--out',
      out,
      '--columns',
      'id,about',
      '--where',
      'name is Long About',
      '--base-url',
      box.url,
      '--token',
      box.token,
    ]);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^Exported 1 record,/);
    expect(stderr).toContain(
      'Warning: 1 text was longer than the 32,767 characters a spreadsheet cell holds and was cut in the XLSX file; export to CSV or JSON Lines for the whole texts.',
    );
    const csv = await runCli([
      'export',
      'parties',
      '--out',
      join(dir, 'long-about.csv'),
      '--columns',
      'id,about',
      '--where',
      'name is Long About',
      '--base-url',
      box.url,
      '--token',
      box.token,
    ]);
    expect(csv.stderr).not.toContain('Warning');
  });
});
