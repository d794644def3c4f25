import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMAIL } from '../../src/mapping/transforms/contact.ts';
import { runCli } from '../helpers/fake-io.ts';
import { allPages, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

/**
 * Customers' first files, drafted by `mapping init --online` and run as drafted: exports of five
 * countries whose rows say their country in their own language, national phone numbers that read
 * as valid in the wrong country too (a Belgian mobile is a valid Dutch number), malformed
 * addresses, columns the account has a custom field for and columns it has none for, and a file
 * of companies. Nobody edits a draft: what it drafts is what runs.
 */
interface Customer {
  file: string;
  text: string;
  /** Each row's name as stored (`firstName lastName`, or an organisation's name) -> the calling code of its row's country. */
  calling: Record<string, string>;
  /** Columns the account has no home for: the draft must leave them out and say how to carry them. */
  notCarried: string[];
  /** Custom fields the draft must fill: party name -> field name -> value stored. */
  fields?: Record<string, Record<string, string>>;
  /** Rows whose address is malformed: kept, without the address. */
  badAddresses: string[];
  organisations?: boolean;
}

const CUSTOMERS: Customer[] = [
  {
    file: 'klanten.csv',
    text: [
      'Klantnummer;Voornaam;Achternaam;E-mail;Telefoon;Plaats;Land;Lid sinds;Nieuwsbrief;Opmerking intern',
      'K-0001;Jan;Bakker;jan@@bakker.nl;020-5551234;Amsterdam;Nederland;15-03-2019;ja;belt liever',
      'K-0002;Els;Peeters;els@peeters.be;0470 12 34 56;Antwerpen;België;01-11-2020;nee;',
      'K-0003;Piet;de Groot;piet@degroot.nl;06-12345678;Rotterdam;Nederland;23-06-2018;ja;VIP',
      'K-0004;An;Janssens;an.janssens@example.be;02 123 45 67;Brussel;België;30-09-2021;nee;',
      'K-0005;Kees;Visser;kees@visser;010 123 4567;Rotterdam;Nederland;02-02-2022;ja;',
    ].join('\n'),
    calling: {
      'Jan Bakker': '+31',
      'Els Peeters': '+32',
      'Piet de Groot': '+31',
      'An Janssens': '+32',
      'Kees Visser': '+31',
    },
    notCarried: ['Opmerking intern'],
    fields: {
      'Jan Bakker': { 'Lid sinds': '2019-03-15', Nieuwsbrief: 'true' },
      'Els Peeters': { 'Lid sinds': '2020-11-01' },
    },
    badAddresses: ['Jan Bakker', 'Kees Visser'],
  },
  {
    file: 'contacts-belgique.csv',
    text: [
      'Prénom;Nom;Courriel;Téléphone;Ville;Pays',
      'Luc;Dubois;luc.dubois@exemple.be;02 123 45 67;Bruxelles;Belgique',
      'Marie;Lambert;marie@@lambert.fr;01 42 68 53 00;Paris;France',
      'Sophie;Maes;sophie.maes@exemple.be;0470 12 34 56;Liège;Belgique',
      'Tom;Smits;tom.smits@voorbeeld.nl;06-12345678;Utrecht;Pays-Bas',
    ].join('\n'),
    calling: { 'Luc Dubois': '+32', 'Marie Lambert': '+33', 'Sophie Maes': '+32', 'Tom Smits': '+31' },
    notCarried: [],
    badAddresses: ['Marie Lambert'],
  },
  {
    file: 'kontakte.csv',
    text: [
      'Vorname,Nachname,E-Mail,Telefon,Mobil,Ort,Land,Kunde seit,Interne Notiz',
      'Hans,Meier,hans.meier@beispiel.de,030 1234567,0171 2345678,Berlin,Deutschland,14.03.2019,netter Kunde',
      'Eva,Huber,eva.huber@beispiel.at,01 5123456,0664 1234567,Wien,Österreich,01.07.2020,',
      'Urs,Keller,urs.keller@beispiel,044 123 45 67,079 123 45 67,Zürich,Schweiz,30.11.2021,',
      'Lena,Schmidt,lena.schmidt@beispiel.de,089 12345678,,München,Deutschland,05.05.2018,',
    ].join('\n'),
    calling: { 'Hans Meier': '+49', 'Eva Huber': '+43', 'Urs Keller': '+41', 'Lena Schmidt': '+49' },
    notCarried: ['Kunde seit', 'Interne Notiz'],
    badAddresses: ['Urs Keller'],
  },
  {
    file: 'contacts-fr.csv',
    text: [
      'Prénom;Nom;E-mail;Téléphone;Portable;Pays',
      'Marie;Dupont;marie.dupont@exemple.fr;01 42 68 53 00;06 12 34 56 78;France',
      'Paul;Martin;paul@martin@exemple.fr;04 72 10 30 30;;France',
      'Claire;Favre;claire.favre@exemple.ch;044 123 45 67;079 123 45 67;Suisse',
    ].join('\n'),
    calling: { 'Marie Dupont': '+33', 'Paul Martin': '+33', 'Claire Favre': '+41' },
    notCarried: [],
    badAddresses: ['Paul Martin'],
  },
  {
    file: 'contactos.csv',
    text: [
      'Nombre,Apellidos,Correo electrónico,Teléfono,País',
      'Ana,García López,ana.garcia@ejemplo.es,912 345 678,España',
      'João,Silva,joao.silva@exemplo,21 234 5678,Portugal',
      'Luis,Martínez,luis.martinez@ejemplo.es,612 34 56 78,España',
    ].join('\n'),
    calling: { 'Ana García López': '+34', 'João Silva': '+351', 'Luis Martínez': '+34' },
    notCarried: [],
    badAddresses: ['João Silva'],
  },
  {
    file: 'bedrijven.csv',
    text: [
      'Naam,KvK-nummer,Website,Telefoon,Land,Sector,Aantal medewerkers',
      'Bakkerij de Vries,01234567,https://devries.example.nl,020-5551234,Nederland,Retail,12',
      'Brouwerij Peeters,0456789123,https://peeters.example.be,09 234 56 78,België,Manufacturing,40',
      'Software Smit,07654321,https://smit.example.nl,010 123 4567,Nederland,Software,7',
    ].join('\n'),
    calling: { 'Bakkerij de Vries': '+31', 'Brouwerij Peeters': '+32', 'Software Smit': '+31' },
    // The account's List field "Sector" offers none of the file's sectors: left out, with why.
    notCarried: ['Sector', 'Aantal medewerkers'],
    // The registry number keeps its leading zero: text, in the account's Text field of its name.
    fields: { 'Bakkerij de Vries': { 'KvK-nummer': '01234567' }, 'Brouwerij Peeters': { 'KvK-nummer': '0456789123' } },
    badAddresses: [],
    organisations: true,
  },
];

let box: TestSandbox;
let dir: string;
const env = (): NodeJS.ProcessEnv => ({ CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token });

beforeAll(async () => {
  box = await startTestSandbox();
  dir = mkdtempSync(join(tmpdir(), 'ferry-drafts-that-run-'));
  // The account's custom fields: some columns have a home of their name and type, others none.
  let order = 100;
  const field = (
    name: string,
    type: 'Text' | 'Date' | 'Boolean' | 'List',
    extra: Record<string, unknown> = {},
  ): void => {
    box.store.fieldDefinitions.insert({
      entity: 'parties',
      name,
      type,
      options: null,
      pattern: null,
      tagId: null,
      important: false,
      forClass: null,
      displayOrder: order++,
      ...extra,
    } as never);
  };
  field('Lid sinds', 'Date');
  field('Nieuwsbrief', 'Boolean');
  field('KvK-nummer', 'Text', { forClass: 'ORGANISATION' });
  // A field of the name whose type the values do not fit: "Kunde seit" holds dates, this takes yes or no.
  field('Kunde seit', 'Boolean');
  field('Sector', 'List', { options: ['Bouw', 'Zorg'] });
});

afterAll(async () => {
  await box?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function partiesByName(): Promise<Map<string, Record<string, any>>> {
  const all = await allPages(box, '/parties?embed=fields', 'parties');
  return new Map(all.map((p) => [p.type === 'organisation' ? p.name : `${p.firstName} ${p.lastName}`, p]));
}

describe('drafts that run as drafted: mapping init --online, then the run, nothing edited', () => {
  it.each(CUSTOMERS)('$file', async (customer) => {
    const folder = join(dir, customer.file.replace(/\W/g, '-'));
    mkdirSync(folder);
    writeFileSync(join(folder, customer.file), `${customer.text}\n`);
    const drafted = await runCli(['mapping', 'init', customer.file, '--online', '--out', 'mapping.yaml'], {
      cwd: folder,
      env: env(),
    });
    expect(drafted.code, drafted.stderr).toBe(0);
    const yaml = readFileSync(join(folder, 'mapping.yaml'), 'utf8');

    // Each column without a home is left out, with the words that make it carry.
    for (const column of customer.notCarried) {
      expect(drafted.stderr).toMatch(
        new RegExp(`"${column}": .*(create a custom field|change the field in the account's settings)`),
      );
      expect(yaml).toMatch(new RegExp(`\\n  "${column}": ".*(create a custom field|change the field)`));
    }
    if (customer.notCarried.length === 0) expect(drafted.stderr).not.toContain('not carried');
    if (customer.organisations) expect(drafted.stderr).toMatch(/^drafted as organisations: .*"KvK-nummer"/m);
    // A row's country, not the numbers' look, says how its number is read.
    expect(yaml).toMatch(/transform: \[\{phone: \{countryColumn: "(Land|Pays|País)", defaultCountry: [A-Z]{2}\}\}\]/);

    const run = await runCli(
      ['import', '--mapping', 'mapping.yaml', '--input', customer.file, '--state-dir', 'state'],
      { cwd: folder, env: env() },
    );
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);

    const stored = await partiesByName();
    for (const [name, calling] of Object.entries(customer.calling)) {
      const party = stored.get(name);
      expect(party, `${name} is in the account`).toBeDefined();
      expect(party?.type).toBe(customer.organisations ? 'organisation' : 'person');
      const numbers = (party?.phoneNumbers ?? []).map((p: { number: string }) => p.number);
      expect(numbers.length, name).toBeGreaterThan(0);
      for (const number of numbers) {
        expect(number, name).toMatch(/^\+\d{8,15}$/);
        expect(number.startsWith(calling), `${name}: ${number} starts with ${calling}`).toBe(true);
      }
      const addresses = (party?.emailAddresses ?? []).map((e: { address: string }) => e.address);
      for (const address of addresses) expect(EMAIL.test(address), address).toBe(true);
      expect(addresses.length, name).toBe(customer.badAddresses.includes(name) || customer.organisations ? 0 : 1);
    }
    for (const [name, values] of Object.entries(customer.fields ?? {})) {
      const fields = Object.fromEntries(
        (stored.get(name)?.fields ?? []).map((f: { definition: { name: string }; value: unknown }) => [
          f.definition.name,
          String(f.value),
        ]),
      );
      expect(fields, name).toMatchObject(values);
    }
  });
});
