import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSource } from '../sources/index.ts';
import { compileMapping } from './compile.ts';
import { draftMapping } from './init.ts';
import { parseMapping } from './load.ts';
import { MAX_MAPPING_BYTES, MAX_MAPPING_FIELDS } from '../util/index.ts';
import { mapRows } from './map-rows.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-init-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function mapAll(file: string, yaml: string): Promise<{ records: number; rejected: string[] }> {
  const compiled = await compileMapping(parseMapping(yaml, 'draft.yaml'), { file: 'draft.yaml' });
  const opened = await openSource(file);
  let records = 0;
  const rejected: string[] = [];
  for await (const item of mapRows(opened.items, compiled)) {
    if (item.kind === 'record') records++;
    else if (item.kind === 'rejected') rejected.push(`${item.row}: ${item.message}`);
  }
  return { records, rejected };
}

describe('draftMapping', () => {
  it('a file of 10,000 columns gives a draft that loads: the entries that fit, and the other columns listed as not drafted', async () => {
    const file = join(dir, 'wide.csv');
    const columns = Array.from({ length: 10_000 }, (_, i) => `Measure ${i + 1}`);
    writeFileSync(file, `Email,${columns.join(',')}\nada@example.com,${columns.map((_, i) => i).join(',')}\n`);
    const draft = await draftMapping(file);
    const mapping = parseMapping(draft.yaml, 'wide.yaml');
    await compileMapping(mapping, { file: 'wide.yaml' });
    expect(Buffer.byteLength(draft.yaml)).toBeLessThanOrEqual(MAX_MAPPING_BYTES);
    expect(mapping.fields.length).toBeLessThanOrEqual(MAX_MAPPING_FIELDS);
    expect(draft.matched[0]).toEqual({ column: 'Email', to: 'email' });
    expect(draft.leftOut.length).toBeGreaterThan(0);
    expect(draft.notCarried.length).toBeGreaterThan(0);
    expect(draft.matched.length + draft.notCarried.length + draft.leftOut.length).toBe(10_001);
    expect(draft.unmatched).toEqual(draft.leftOut);
    expect(draft.yaml).toContain(
      `  # ${draft.leftOut.length.toLocaleString('en-GB')} more columns are not drafted (from "${draft.leftOut[0]}" on): a mapping file holds at most`,
    );
    expect(draft.yaml).toMatch(/#   and [\d,]+ more \(crm-ferry inspect lists every column\)\n$/);
  });

  it('a type column of person and organisation gives the type, and the whole name names the organisations', async () => {
    const file = join(dir, 'parties-export.csv');
    writeFileSync(
      file,
      'id,type,name,firstName,lastName,email\n1,organisation,Acme Ltd,,,info@acme.example\n2,person,Ada Lovelace,Ada,Lovelace,ada@acme.example\n',
    );
    const draft = await draftMapping(file);
    expect(draft.yaml).toContain(
      '  - to: type\n    # "type" says person or organisation for each row\n    value: {column: "type", transform: [trim]}\n',
    );
    expect(draft.yaml).toContain(
      '    value: {column: "name", transform: [trim], when: {column: "type", equals: organisation}}\n',
    );
    expect(draft.unmatched).toEqual([]);
    expect(await mapAll(file, draft.yaml)).toEqual({ records: 2, rejected: [] });
  });

  it("a legacy v1 export: columns only later rows hold (an organisation's name) are drafted too, and every row maps", async () => {
    const file = join(ROOT, 'samples/v1/parties.xml');
    const draft = await draftMapping(file);
    expect(draft.header).toContain('name');
    expect(draft.matched).toContainEqual({ column: 'name', to: 'name' });
    expect((await mapAll(file, draft.yaml)).rejected).toEqual([]);
  });

  it('a legacy v1 export: every numbered email, phone, address and website becomes one `items: numbered` entry', async () => {
    const file = join(ROOT, 'samples/v1/parties.xml');
    const draft = await draftMapping(file);
    expect(draft.yaml).toContain(
      '  - to: phone\n    # every phone of a record (phone.1, phone.2, ...), each with its own type\n    items: numbered\n    type: {column: "phone.*.type", transform: [trim]}\n',
    );
    expect(draft.yaml).toContain('    service: {column: "website.*.webService", transform: [trim]}\n');
    expect(draft.matched).toContainEqual({ column: 'phone.3.phoneNumber', to: 'phone' });
    expect(draft.unmatched).toContain('phone.3.id');
    expect(draft.yaml).not.toContain('definition: "phone.');
    const compiled = await compileMapping(parseMapping(draft.yaml, 'draft.yaml'), { file: 'draft.yaml' });
    for await (const item of mapRows((await openSource(file)).items, compiled)) {
      if (item.kind === 'record' && item.key === '101') {
        expect(item.record.phoneNumbers).toEqual([
          { type: 'Mobile', number: '07700 900123' },
          { type: 'Work', number: '0117 496 0000' },
          { type: 'Home', number: '020 7946 0018' },
        ]);
        expect(item.record.addresses).toHaveLength(2);
      }
    }
  });

  it('a file whose rows cannot be read says why, with the first row error, not that it has no rows', async () => {
    const file = join(dir, 'truncated.csv');
    writeFileSync(file, 'name;email\n"unterminated;x@y.z\n');
    const error = await draftMapping(file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'SOURCE_MALFORMED_RECORD', location: { file, row: 2, line: 2 } });
    expect((error as Error).message).toMatch(
      /^no row could be read to draft a mapping from; the first: a quote opened in field 1 on line 2 is never closed/,
    );
    expect((error as { hint: string }).hint).toBe(`Run 'crm-ferry inspect ${file}' to see every row error.`);
  });

  it('places the columns of a French export: the company, the tags, and the customer reference as the key', async () => {
    const file = join(dir, 'clients-fr.csv');
    writeFileSync(
      file,
      "Prénom;Nom;Société;E-mail;Téléphone;Date de naissance;Étiquettes;Chiffre d'affaires;Notes;Réf client\nMarie;Dupont;Bœuf & Cie;marie.dupont@exemple.fr;06 12 34 56 78;21/07/1951;client,vip;448.609,91;Appeler le lundi;C-1001\n",
    );
    const draft = await draftMapping(file);
    expect(draft.key).toBe('{{Réf client}}');
    expect(draft.matched).toEqual([
      { column: 'Réf client', to: 'key' },
      { column: 'Prénom', to: 'firstName' },
      { column: 'Nom', to: 'lastName' },
      { column: 'Société', to: 'organisation' },
      { column: 'E-mail', to: 'email' },
      { column: 'Téléphone', to: 'phone' },
      { column: 'Étiquettes', to: 'tags' },
      { column: 'Notes', to: 'about' },
    ]);
    expect(draft.unmatched).toEqual([]);
    // Offline no custom field of the account is known: the columns are left out, each with the field to create.
    expect(draft.notCarried).toEqual([
      {
        column: 'Date de naissance',
        why: `no standard field takes it: create a custom field "Date de naissance" (Date) in the account's settings, then map it`,
      },
      {
        column: "Chiffre d'affaires",
        why: `no standard field takes it: create a custom field "Chiffre d'affaires" (Text) in the account's settings, then map it`,
      },
    ]);
    expect(parseMapping(draft.yaml, 'draft.yaml').leaveOut).toEqual(
      Object.fromEntries(draft.notCarried.map((n) => [n.column, n.why])),
    );
    expect(await mapAll(file, draft.yaml)).toEqual({ records: 1, rejected: [] });
  });

  it.each([
    [
      'Kundennummer;Vorname;Nachname;Firma;Schlagwörter\n4711;Hans;Meier;Meier GmbH;kunde\n',
      'Kundennummer',
      ['firstName', 'lastName', 'organisation', 'tags'],
    ],
    [
      'Número de cliente;Nombre;Apellidos;Empresa;Etiquetas\nE-7;Ana;García;Acme SL;cliente\n',
      'Número de cliente',
      ['firstName', 'lastName', 'organisation', 'tags'],
    ],
    [
      'Klantnummer;Voornaam;Achternaam;Bedrijf;Etiketten\nK-1;Jan;Jansen;Acme BV;klant\n',
      'Klantnummer',
      ['firstName', 'lastName', 'organisation', 'tags'],
    ],
    [
      'Codice cliente;Nome;Cognome;Azienda;Etichette\nI-1;Luca;Rossi;Acme SRL;cliente\n',
      'Codice cliente',
      ['firstName', 'lastName', 'organisation', 'tags'],
    ],
  ])('places a German, Spanish, Dutch and Italian header (%#)', async (text, key, targets) => {
    const file = join(dir, `lang-${key.replace(/\W/g, '')}.csv`);
    writeFileSync(file, text);
    const draft = await draftMapping(file);
    expect(draft.key).toBe(`{{${key}}}`);
    expect(draft.matched.map((m) => m.to)).toEqual(['key', ...targets]);
  });

  it('drafts a party mapping from samples/contacts.csv that maps its rows', async () => {
    const file = join(ROOT, 'samples/contacts.csv');
    const draft = await draftMapping(file);
    expect(draft.key).toBe('{{email}}');
    expect(draft.matched).toEqual([
      { column: 'first_name', to: 'firstName' },
      { column: 'last_name', to: 'lastName' },
      { column: 'email', to: 'email' },
      { column: 'phone', to: 'phone' },
      { column: 'company', to: 'organisation' },
      { column: 'job_title', to: 'jobTitle' },
      { column: 'street', to: 'address' },
      { column: 'city', to: 'address' },
      { column: 'postcode', to: 'address' },
      { column: 'country', to: 'address' },
      { column: 'tags', to: 'tags' },
      { column: 'notes', to: 'about' },
    ]);
    expect(draft.unmatched).toEqual([]);
    expect(draft.notCarried.map((n) => n.column)).toEqual(['date_added']);
    expect(draft.yaml).toContain('value: {column: "tags", transform: [{split: ";"}]}');
    // The entry to add once the account has the field, as a comment.
    expect(draft.yaml).toContain('#     value: {column: "date_added", transform: [date]}');
    const compiled = await compileMapping(parseMapping(draft.yaml, 'draft.yaml'), { file: 'draft.yaml' });
    compiled.checkColumns(draft.header);
    const { records, rejected } = await mapAll(file, draft.yaml);
    expect(rejected).toEqual([]);
    expect(records).toBeGreaterThan(10);
  });

  it('drafts from samples/contacts.xlsx', async () => {
    const file = join(ROOT, 'samples/contacts.xlsx');
    const draft = await draftMapping(file);
    expect(draft.matched.map((m) => m.to)).toEqual(['lastName', 'email', 'phone', 'website', 'about', 'email']);
    expect(draft.notCarried).toHaveLength(4);
    expect(draft.key).toBe('{{Email}}');
    expect(draft.yaml).toContain('#     value: {column: "Born", transform: [date]}');
    const compiled = await compileMapping(parseMapping(draft.yaml, 'draft.yaml'), { file: 'draft.yaml' });
    expect(() => compiled.checkColumns(draft.header)).not.toThrow();
  });

  it('prefers an id column for the key, names an organisation when there are no person columns, and matches headers ignoring case and punctuation', async () => {
    const file = join(dir, 'orgs.csv');
    writeFileSync(
      file,
      'Account ID,ACCOUNT NAME,E-Mail Address,Post-code,Telephone,Mystery\n7,Acme,info@acme.test,N1,020 1,?\n',
    );
    const draft = await draftMapping(file);
    expect(draft.key).toBe('{{Account ID}}');
    expect(draft.matched).toEqual([
      { column: 'Account ID', to: 'key' },
      { column: 'ACCOUNT NAME', to: 'name' },
      { column: 'E-Mail Address', to: 'email' },
      { column: 'Post-code', to: 'address' },
      { column: 'Telephone', to: 'phone' },
    ]);
    expect(draft.unmatched).toEqual([]);
    expect(draft.notCarried.map((n) => n.column)).toEqual(['Mystery']);
    expect(draft.organisations).toBe('"ACCOUNT NAME" names a company, and no column a person');
    expect(draft.yaml).toContain(
      '  - to: type\n    # organisations: "ACCOUNT NAME" names a company, and no column a person\n    value: organisation\n',
    );
    // "020 1" is no number of any country: the draft says so instead of guessing one.
    expect(draft.yaml).toContain('# the country of these numbers could not be told');
    const { records, rejected } = await mapAll(file, draft.yaml);
    expect({ records, rejected }).toEqual({ records: 1, rejected: [] });
  });

  it.each([
    ['a whole name beside a company name', 'Name,Company Name,Email\nAda Lovelace,Acme Ltd,ada@acme.example\n'],
    [
      'a whole name beside a company and its number',
      'Naam,Bedrijf,KvK-nummer\nJan Bakker,Bakkerij de Vries,01234567\n',
    ],
  ])('a contact list is drafted as people: %s', async (_, text) => {
    const file = join(dir, 'contacts-whole-names.csv');
    writeFileSync(file, text);
    const draft = await draftMapping(file);
    expect(draft.organisations).toBeNull();
    expect(draft.matched.map((m) => m.to)).toContain('organisation');
    expect(draft.matched.map((m) => m.to)).not.toContain('name');
    await compileMapping(parseMapping(draft.yaml, 'draft.yaml'), { file: 'draft.yaml' });
  });

  it('drafts other entities with a commented link to fill in', async () => {
    const file = join(dir, 'tasks.csv');
    writeFileSync(file, 'Task,Assigned To,Status\nCall back,ada,open\n');
    const draft = await draftMapping(file, { entity: 'task' });
    expect(draft.matched).toEqual([
      { column: 'Task', to: 'description' },
      { column: 'Assigned To', to: 'owner' },
      { column: 'Status', to: 'status' },
    ]);
    expect(draft.yaml).toContain('# - to: party');
    expect(parseMapping(draft.yaml, 'draft.yaml').entity).toBe('task');
  });

  it('refuses a file without rows', async () => {
    const file = join(dir, 'empty.csv');
    writeFileSync(file, 'a,b\n');
    await expect(draftMapping(file)).rejects.toMatchObject({ code: 'SOURCE_HEADER' });
  });
});
