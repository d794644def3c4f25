import { basename } from 'node:path';
import { FerryError } from '../errors/index.ts';
import { type CellValue, isIdColumn, openSource, type OpenSourceOptions } from '../sources/index.ts';
import { normalizeWord, formatCount } from '../util/index.ts';
import type { Entity } from './schema.ts';
import type { CountryCode } from 'libphonenumber-js';
import type { CatalogFieldDefinition } from '../client/index.ts';
import { countryOfDomain } from './countries.ts';
import { fieldHomeOf } from './init-fields.ts';
import {
  proposeDate,
  proposeNumber,
  proposePhone,
  proposeRowCountry,
  proposeSplit,
  sampleTexts,
  type Proposal,
} from './init-values.ts';
import { MAX_MAPPING_BYTES, MAX_MAPPING_FIELDS, MAX_NAMES_SHOWN, printable } from '../util/index.ts';

/** Options of draftMapping. */
export interface DraftOptions extends OpenSourceOptions {
  /** What each row becomes. @default the kind of a legacy v1 export's records, else 'party' */
  entity?: Entity;
  /** Rows read for samples (tag separators, whether a column holds ids). @default 20 */
  sampleRows?: number;
  /**
   * The account's custom field definitions of the entity (`mapping init --online`, the workbench):
   * a column no standard field takes is mapped to the field of its name that takes its values, and
   * left out, with why, when there is none. Without them (offline) every such column is left out,
   * with the field to create. Never a field the account may lack: the run would stop at it.
   */
  customFields?: readonly CatalogFieldDefinition[];
}

/** A column the draft does not carry, and the words that make it carry. */
export interface NotCarried {
  column: string;
  why: string;
}

export interface DraftResult {
  /** The drafted mapping file, with comments; it loads and compiles (within a mapping's limits of size and entries). */
  yaml: string;
  header: string[];
  /** Column -> target it was mapped to. */
  matched: Array<{ column: string; to: string }>;
  unmatched: string[];
  /**
   * Columns an entry was drafted for but left out, because the draft would be over what a mapping
   * file may hold (MAX_MAPPING_BYTES, MAX_MAPPING_FIELDS): a file of 10,000 columns. Also in `unmatched`.
   */
  leftOut: string[];
  /** The column or template chosen as the key. */
  key: string;
  /** What each row becomes, and why when it was not asked for: `the file holds v1 opportunity records`. */
  entity: Entity;
  entityReason: string | null;
  /** Columns with values that no field of the draft carries (its `leaveOut:`), each with what to do to carry it. */
  notCarried: NotCarried[];
  /** Why the rows are drafted as organisations, when they are (`the file's columns "KvK-nummer", "Sector" are a company's`). */
  organisations: string | null;
}

/** What the records of a legacy v1 export become. */
const V1_ENTITIES: Readonly<Record<string, Entity>> = {
  person: 'party',
  organisation: 'party',
  opportunity: 'opportunity',
  kase: 'kase',
  task: 'task',
  historyItem: 'entry',
};

/** What a draft entry writes for a matched column. */
interface Rule {
  to: string;
  /** Extra YAML lines of the entry (after `to` and before `value`). */
  extra?: string[];
  transform?: string;
  /** Address part, when `to` is address. */
  part?: 'street' | 'houseNumber' | 'city' | 'state' | 'zip' | 'country';
  /** What the column is when `to` is taken already: Salesforce's "Title" after its "Salutation" is the job title. */
  alt?: Rule;
  /** The record this one belongs to: placed by a plan's `ref`, not by this draft alone. */
  link?: boolean;
  /** A whole name: placed only when the file has no first and last name columns. */
  wholeName?: boolean;
}

/**
 * An e-mail column's entry: its type, and the address checked (the `email` transform trims and
 * lower-cases it); a malformed one is left out with a warning and the record kept.
 */
function emailExtra(type: string): string[] {
  return [
    `type: ${type}`,
    '# a malformed address (jan@@bakker.nl) is left out of the record, with a warning',
    'onInvalid: drop',
  ];
}

/** A normalised phone entry's rule for a number it cannot read. */
const PHONE_CHECKED = [
  '# a number not valid in its country (or written with letters) is left out of the record, with a warning',
  'onInvalid: drop',
];

const word = (names: string[], rule: Rule): Array<[string, Rule]> => names.map((n) => [normalizeWord(n), rule]);

// Header names seen in exports of spreadsheets and CRMs, in English, French, German, Spanish,
// Dutch and Italian, compared without case, accents, spaces or punctuation ("E-Mail Address" =
// "emailaddress", "Société" = "societe").
const PARTY_RULES = new Map<string, Rule>([
  ...word(
    ['First Name', 'Firstname', 'Given name', 'Forename', 'Vorname', 'Prénom', 'First', 'Nombre', 'Voornaam', 'Nome'],
    { to: 'firstName', transform: '[trim]' },
  ),
  ...word(
    [
      'Last Name',
      'Lastname',
      'Surname',
      'Family name',
      'Nachname',
      'Familienname',
      'Nom',
      'Nom de famille',
      'Last',
      'Apellido',
      'Apellidos',
      'Achternaam',
      'Cognome',
    ],
    { to: 'lastName', transform: '[trim]' },
  ),
  ...word(
    [
      'Name',
      'Full Name',
      'Contact Name',
      'Contact',
      'Person',
      'Naam',
      'Volledige naam',
      'Vollständiger Name',
      'Nom complet',
      'Nombre completo',
      'Nome completo',
    ],
    {
      to: 'lastName',
      wholeName: true,
      extra: ['# the whole name goes to lastName: split it into firstName and lastName if the file allows'],
      transform: '[trim]',
    },
  ),
  ...word(['Salutation', 'Anrede', 'Civilité', 'Tratamiento', 'Aanhef'], { to: 'title', transform: '[trim]' }),
  ...word(['Title', 'Titre', 'Titolo'], {
    to: 'title',
    transform: '[trim]',
    alt: { to: 'jobTitle', transform: '[trim]' },
  }),
  ...word(
    [
      'Job Title',
      'Jobtitle',
      'Position',
      'Role',
      'Berufsbezeichnung',
      'Funktion',
      'Fonction',
      'Poste',
      'Cargo',
      'Puesto',
      'Functie',
      'Ruolo',
      'Qualifica',
    ],
    { to: 'jobTitle', transform: '[trim]' },
  ),
  ...word(
    [
      'Company',
      'Company Name',
      'Organisation',
      'Organization',
      'Organisation Name',
      'Organization Name',
      'Account Name',
      'Account',
      'Firma',
      'Unternehmen',
      'Employer',
      'Société',
      'Entreprise',
      'Empresa',
      'Compañía',
      'Bedrijf',
      'Organisatie',
      'Azienda',
      'Società',
      'Ditta',
    ],
    {
      to: 'organisation',
      transform: '[trim]',
    },
  ),
  ...word(
    [
      'E-mail',
      'Email',
      'Email Address',
      'E-mail Address',
      'Mail',
      'Work Email',
      'Email Work',
      'E-Mail-Adresse',
      'Emailaddress',
      'Courriel',
      'Adresse e-mail',
      'Correo',
      'Correo electrónico',
      'E-mailadres',
      'Posta elettronica',
    ],
    {
      to: 'email',
      extra: emailExtra('Work'),
      transform: '[email]',
    },
  ),
  ...word(['Home Email', 'Private Email', 'Personal Email', 'Email Home', 'E-Mail privat'], {
    to: 'email',
    extra: emailExtra('Home'),
    transform: '[email]',
  }),
  ...word(
    [
      'Mobile',
      'Mobile Phone',
      'Mobile Number',
      'Mobile Phone Number',
      'Phone Mobile',
      'Cell',
      'Cell Phone',
      'Handy',
      'Mobil',
      'Mobiltelefon',
      'Mobilnummer',
      'Portable',
      'Téléphone portable',
      'Móvil',
      'Celular',
      'Mobiel',
      'Cellulare',
    ],
    { to: 'phone', extra: ['type: Mobile'], transform: '[trim]' },
  ),
  ...word(
    [
      'Phone',
      'Phone Number',
      'Telephone',
      'Tel',
      'Telefon',
      'Telefonnummer',
      'Work Phone',
      'Phone Work',
      'Business Phone',
      'Téléphone',
      'Teléfono',
      'Telefoon',
      'Telefoonnummer',
      'Telefono',
    ],
    {
      to: 'phone',
      extra: ['type: Work'],
      transform: '[trim]',
    },
  ),
  ...word(['Fax', 'Fax Number'], { to: 'phone', extra: ['type: Fax'], transform: '[trim]' }),
  ...word(
    [
      'Street',
      'Address',
      'Street Address',
      'Address Line 1',
      'Address 1',
      'Strasse',
      'Straße',
      'Mailing Street',
      'Adresse',
      'Rue',
      'Dirección',
      'Calle',
      'Adres',
      'Straat',
      'Indirizzo',
    ],
    { to: 'address', part: 'street' },
  ),
  ...word(
    ['House number', 'House No', 'Hausnummer', 'Hausnr', 'Numéro de rue', 'Número', 'Huisnummer', 'Numero civico'],
    { to: 'address', part: 'houseNumber' },
  ),
  ...word(
    [
      'City',
      'Town',
      'Ort',
      'Stadt',
      'Mailing City',
      'Ville',
      'Ciudad',
      'Localidad',
      'Plaats',
      'Woonplaats',
      'Città',
      'Comune',
    ],
    { to: 'address', part: 'city' },
  ),
  ...word(
    [
      'State',
      'Region',
      'County',
      'Province',
      'Bundesland',
      'Mailing State',
      'Département',
      'Provincia',
      'Estado',
      'Provincie',
      'Regione',
    ],
    { to: 'address', part: 'state' },
  ),
  ...word(
    [
      'Postcode',
      'Post Code',
      'Zip',
      'Zip Code',
      'Postal Code',
      'PLZ',
      'Postleitzahl',
      'Mailing Zip',
      'Code postal',
      'CP',
      'Código postal',
      'CAP',
    ],
    { to: 'address', part: 'zip' },
  ),
  ...word(['Country', 'Land', 'Mailing Country', 'Pays', 'País', 'Paese', 'Nazione'], {
    to: 'address',
    part: 'country',
  }),
  ...word(
    [
      'Website',
      'Web Site',
      'Website URL',
      'URL',
      'Homepage',
      'Web',
      'Webseite',
      'Site web',
      'Site internet',
      'Sitio web',
      'Página web',
      'Sito web',
    ],
    { to: 'website', transform: '[trim]' },
  ),
  ...word(['LinkedIn', 'LinkedIn Company Page', 'LinkedIn URL', 'LinkedIn Profile'], {
    to: 'website',
    extra: ['service: LINKED_IN'],
    transform: '[trim]',
  }),
  ...word(['Twitter', 'X (Twitter)'], { to: 'website', extra: ['service: TWITTER'], transform: '[trim]' }),
  ...word(
    [
      'Tags',
      'Tag',
      'Labels',
      'Label',
      'Schlagworte',
      'Schlagwörter',
      'Étiquettes',
      'Étiquette',
      'Mots-clés',
      'Etiquetas',
      'Etiketten',
      'Etichette',
    ],
    { to: 'tags' },
  ),
  ...word(
    [
      'Notes',
      'Note',
      'About',
      'Description',
      'Comments',
      'Comment',
      'Bemerkung',
      'Bemerkungen',
      'Notizen',
      'Anmerkungen',
      'Remarques',
      'Commentaires',
      'Notas',
      'Observaciones',
      'Opmerkingen',
      'Notities',
      'Commenti',
    ],
    {
      to: 'about',
    },
  ),
  ...word(
    [
      'Owner',
      'Contact Owner',
      'Company Owner',
      'Account Manager',
      'Account Owner',
      'Betreuer',
      'Propriétaire',
      'Responsable',
      'Propietario',
      'Eigenaar',
      'Proprietario',
      'Responsabile',
    ],
    { to: 'owner', transform: '[trim]' },
  ),
]);

const GENERIC_RULES: Record<Exclude<Entity, 'party'>, Map<string, Rule>> = {
  kase: new Map([
    ...word(['Name', 'Project', 'Project Name', 'Case', 'Case Name', 'Title'], { to: 'name', transform: '[trim]' }),
    ...word(['Description', 'Details', 'Notes'], { to: 'description' }),
    ...word(['Status', 'State'], { to: 'status', transform: '[trim]' }),
    ...word(['Stage'], { to: 'stage', transform: '[trim]' }),
    ...word(['Owner', 'Assigned To'], { to: 'owner', transform: '[trim]' }),
    ...word(['Tags', 'Labels'], { to: 'tags' }),
  ]),
  opportunity: new Map([
    ...word(['Name', 'Opportunity', 'Opportunity Name', 'Deal', 'Deal Name', 'Title'], {
      to: 'name',
      transform: '[trim]',
    }),
    ...word(['Description', 'Details', 'Notes'], { to: 'description' }),
    ...word(['Pipeline'], { to: 'pipeline', transform: '[trim]' }),
    ...word(['Milestone', 'Stage', 'Deal Stage'], { to: 'milestone', transform: '[trim]' }),
    ...word(['Amount', 'Value', 'Deal Value'], { to: 'amount', transform: '[number]' }),
    ...word(['Currency', 'Currency Code', 'Opportunity Currency', 'Deal Currency'], {
      to: 'currency',
      transform: '[trim, uppercase]',
    }),
    ...word(['Close Date', 'Expected Close Date', 'Expected Close', 'Closing Date'], { to: 'expectedCloseOn' }),
    ...word(['Won Time', 'Closed On', 'Won Date', 'Date Won'], { to: 'closedOn' }),
    ...word(
      ['Organization', 'Organisation', 'Account', 'Account Name', 'Company', 'Contact Person', 'Person', 'Contact'],
      { to: 'party', link: true },
    ),
    ...word(['Probability', 'Probability (%)'], { to: 'probability', transform: '[integer]' }),
    ...word(['Lost Reason', 'Reason Lost'], { to: 'lostReason' }),
    ...word(['Owner', 'Deal Owner', 'Opportunity Owner'], { to: 'owner', transform: '[trim]' }),
    ...word(['Tags', 'Labels'], { to: 'tags' }),
  ]),
  entry: new Map([
    ...word(['Note', 'Notes', 'Content', 'Body', 'Text', 'Comment'], { to: 'content' }),
    ...word(['Activity Type', 'Type'], { to: 'activityType', transform: '[trim]' }),
    ...word(['Attachment', 'File', 'Attachment Path'], { to: 'attachment' }),
  ]),
  task: new Map([
    ...word(['Description', 'Task', 'Subject', 'Title', 'Name'], { to: 'description', transform: '[trim]' }),
    ...word(['Detail', 'Details', 'Notes', 'Body'], { to: 'detail' }),
    ...word(['Category', 'Task Type', 'Type'], { to: 'category', transform: '[trim]' }),
    ...word(['Owner', 'Assigned To', 'Assignee'], { to: 'owner', transform: '[trim]' }),
    ...word(['Status'], { to: 'status', transform: '[trim]' }),
    ...word(
      [
        'Due',
        'Due Date',
        'Due On',
        'Fällig',
        'Fällig am',
        'Fälligkeit',
        'Échéance',
        "Date d'échéance",
        'Vencimiento',
        'Vervaldatum',
        'Scadenza',
      ],
      { to: 'dueOn' },
    ),
  ]),
};

/** Columns left out whose entry-to-be a draft writes out as a comment; the others are alike. */
const MAX_ENTRIES_SHOWN = 10;

/** Room kept in a draft for the lines around its entries: the address, the comments, 50 columns not mapped. */
const DRAFT_ROOM_BYTES = 64 * 1024;
const DRAFT_ROOM_FIELDS = 10;

/** A column's name as a comment lists it: quoted, and cut at 200 characters. */
function shortName(column: string): string {
  return column.length > 200 ? `${q(column.slice(0, 200))}...` : q(column);
}

// Targets written once; a second column matching one is left unmatched (listed in the comments).
const REPEATABLE = new Set(['phone', 'email', 'website', 'tags']);

// JSON's escapes are YAML's; printable() adds the characters JSON leaves raw (U+2028, bidi overrides).
const q = (text: string): string => printable(JSON.stringify(text));

/** Pipedrive's "Person - ", "Deal - " before every column name. */
const RECORD_PREFIX = /^(person|organi[sz]ation|contact|company|account|deal|lead)\s+-\s+/i;

/**
 * The names a column may be known by, tried in order: as written; without a CRM's record prefix
 * ("Person - Email - Work"), an address qualifier ("Mailing City", "... of Address") or the
 * parts of a compound name ("State/Region", "Email - Work" read as "Work Email").
 */
function columnNames(column: string): string[] {
  // "Email_2": the reader's name for a second "Email" column.
  const names = [column, column.replace(/_\d+$/, '')];
  let plain = column.replace(/_\d+$/, '').replace(RECORD_PREFIX, '');
  plain = plain.replace(/\s+of address$/i, '').replace(/^(mailing|billing|shipping|primary|main)\s+/i, '');
  names.push(plain);
  const dashed = /^(.+?)\s+-\s+(.+)$/.exec(plain);
  if (dashed) names.push(`${dashed[2]} ${dashed[1]}`, dashed[1] as string);
  if (plain.includes('/')) names.push(...plain.split('/').map((part) => part.trim()));
  return names;
}

/** The entities whose records have custom fields. */
const CUSTOM_ENTITIES = new Set<Entity>(['party', 'kase', 'opportunity']);

/** An id column other than the key ("Account ID", "Associated Company IDs"): a link to records of another file. */
function isLinkColumn(column: string): boolean {
  return /(^|[a-z])ids?(primary|secondary)?$/.test(normalizeWord(column));
}

const DATE_TARGETS = new Set(['startOn', 'expectedCloseOn', 'closedOn', 'dueOn']);

/** What the file says beyond a column's own values: its date order, each row's country, the countries of its addresses. */
interface FileEvidence {
  hint: { monthFirst?: string };
  /** The column naming each row's country (`Land`, `Country`), when the file has one. */
  countryColumn: string | undefined;
  /** The rows read, as the samples came. */
  rows: ReadonlyArray<Readonly<Record<string, CellValue>>>;
  /** The countries of the file's e-mail addresses and websites, one per address (`.nl`). */
  countries: CountryCode[];
}

/** The transforms of a matched column: the rule's own, or the ones its sample values call for. */
function transformsFor(
  column: string,
  to: string,
  rule: Rule,
  samples: CellValue[],
  evidence: FileEvidence,
): { transforms: string[]; why: string[] } {
  const { hint } = evidence;
  const base = rule.transform ? rule.transform.slice(1, -1).split(', ') : [];
  const from = (
    proposal: Proposal | undefined,
    fallback: string[],
    missing?: string,
  ): { transforms: string[]; why: string[] } =>
    proposal
      ? { transforms: [proposal.transform], why: [proposal.why] }
      : { transforms: fallback, why: missing ? [missing] : [] };
  if (to === 'tags') return from(proposeSplit(samples), []);
  if (to === 'phone') {
    const national = sampleTexts(samples).some((t) => !t.startsWith('+'));
    // A country column says each row's country; the numbers' own look is only a guess.
    const byRow =
      national && evidence.countryColumn !== undefined
        ? proposeRowCountry(
            evidence.rows.map((row) => [row[column] ?? null, row[evidence.countryColumn as string] ?? null] as const),
            evidence.countryColumn,
          )
        : undefined;
    return from(
      byRow ?? proposePhone(samples, evidence.countries),
      base,
      national
        ? 'the country of these numbers could not be told: add {phone: XX} (an ISO country) to normalise them'
        : undefined,
    );
  }
  if (to === 'email' && sampleTexts(samples).some((t) => /[;,]/.test(t))) {
    const split = proposeSplit(samples);
    return { transforms: [split.transform, 'email'], why: [split.why] };
  }
  if (DATE_TARGETS.has(to)) return from(proposeDate(samples, hint), base);
  if (to === 'amount') return from(proposeNumber(samples), base);
  return { transforms: base, why: [] };
}

/** A numbered column of a contact list, as the v1 reader flattens them: `phone.2.phoneNumber`. */
const NUMBERED = /^(email|phone|address|website)\.(\d+)\.(\w+)$/;

/** What each part of a numbered v1 contact item is in an `items: numbered` entry; parts not named are not carried. */
const NUMBERED_PARTS: Record<string, Record<string, string>> = {
  email: { type: 'type', emailAddress: 'value' },
  phone: { type: 'type', phoneNumber: 'value' },
  address: {
    type: 'type',
    street: 'parts.street',
    city: 'parts.city',
    state: 'parts.state',
    zip: 'parts.zip',
    country: 'parts.country',
  },
  website: { type: 'type', webService: 'service', webAddress: 'value' },
};

/** Why a numbered part is left out of the draft. */
const NUMBERED_LEFT_OUT: Record<string, string> = {
  id: "the legacy item's id: the service gives each item its own",
  url: 'made from the service and the address, which are carried',
};

/**
 * The `items: numbered` entries for a party file's numbered contact columns (a legacy v1 export's
 * `email.1.emailAddress`, `email.2.type`, ...): every item of each list, with its type. Returns
 * the lines, the columns they read and the columns of those lists they leave out, with why.
 */
function numberedEntries(
  header: readonly string[],
  samples: ReadonlyMap<string, CellValue[]>,
): { lines: string[]; used: string[]; leftOut: Map<string, string> } {
  const lists = new Map<string, Set<string>>();
  for (const column of header) {
    const m = NUMBERED.exec(column);
    if (!m) continue;
    const parts = lists.get(m[1] as string) ?? new Set<string>();
    parts.add(m[3] as string);
    lists.set(m[1] as string, parts);
  }
  const lines: string[] = [];
  const used: string[] = [];
  const leftOut = new Map<string, string>();
  for (const [list, parts] of lists) {
    const roles = NUMBERED_PARTS[list] as Record<string, string>;
    const pattern = (part: string): string => `${list}.*.${part}`;
    if (![...parts].some((part) => roles[part] === 'value' || roles[part]?.startsWith('parts.'))) continue;
    lines.push(
      `  - to: ${list}`,
      `    # every ${list} of a record (${list}.1, ${list}.2, ...), each with its own type`,
      '    items: numbered',
    );
    const partLines: string[] = [];
    for (const part of parts) {
      const role = roles[part];
      if (role === undefined) continue;
      const transforms =
        role === 'value' && list === 'email'
          ? ['trim', 'lowercase']
          : role === 'value' && list === 'phone'
            ? phoneTransforms(header, samples, list, part)
            : ['trim'];
      const spec = `{column: ${q(pattern(part))}, transform: [${transforms.join(', ')}]}`;
      if (role.startsWith('parts.')) partLines.push(`      ${role.slice(6)}: ${spec}`);
      else lines.push(`    ${role}: ${spec}`);
    }
    if (partLines.length > 0) lines.push('    parts:', ...partLines);
    for (const column of header) {
      const m = NUMBERED.exec(column);
      if (m?.[1] !== list) continue;
      if (roles[m[3] as string] !== undefined) used.push(column);
      else leftOut.set(column, NUMBERED_LEFT_OUT[m[3] as string] ?? `no part of a ${list} in the service`);
    }
  }
  return { lines, used, leftOut };
}

/** A phone list's transforms, proposed from the numbers of every item. */
function phoneTransforms(
  header: readonly string[],
  samples: ReadonlyMap<string, CellValue[]>,
  list: string,
  part: string,
): string[] {
  const values = header
    .filter((column) => NUMBERED.exec(column)?.[1] === list && column.endsWith(`.${part}`))
    .flatMap((column) => samples.get(column) ?? []);
  const proposal = proposePhone(values);
  return proposal ? [proposal.transform] : ['trim'];
}

/** Targets only a person has (names apart, its company), but for its names: an organisations file leaves such columns unmapped. */
const PERSON_ONLY_TARGETS = ['title', 'jobTitle'] as const;

/**
 * Columns only a company has, as exports in the drafts' languages name them: its registry and tax
 * numbers, its trade, its size, its turnover, its legal name.
 */
const ORGANISATION_COLUMNS = new Set(
  [
    'KvK',
    'KvK-nummer',
    'KvK nr',
    'Chamber of Commerce',
    'CoC number',
    'Company number',
    'Company registration number',
    'Registration number',
    'Handelsregister',
    'Handelsregisternummer',
    'HRB',
    'Registernummer',
    'SIRET',
    'SIREN',
    'CIF',
    'NIF',
    'VAT',
    'VAT number',
    'VAT ID',
    'BTW',
    'BTW-nummer',
    'USt-IdNr',
    'USt-ID',
    'Umsatzsteuer-ID',
    'TVA',
    'Numéro de TVA',
    'Partita IVA',
    'Industry',
    'Branche',
    'Sector',
    'Secteur',
    'Settore',
    'Employees',
    'Number of employees',
    'Medewerkers',
    'Aantal medewerkers',
    'Mitarbeiter',
    'Anzahl Mitarbeiter',
    'Employés',
    'Empleados',
    'Dipendenti',
    'Company Name',
    'Bedrijfsnaam',
    'Firmenname',
    'Raison sociale',
    'Razón social',
    'Ragione sociale',
    'Organisation Name',
    'Organization Name',
    'Legal name',
    'Annual revenue',
    'Omzet',
    'Umsatz',
    "Chiffre d'affaires",
    'Facturación',
    'Fatturato',
  ].map(normalizeWord),
);

/** A file named for companies: `companies.csv`, `Bedrijven 2024.xlsx`, `organisaties.csv`. */
const ORGANISATION_FILE =
  /(compan|organi[sz]ation|organisatie|bedrijven|firmen|unternehmen|entreprises|societes|empresas|aziende|accounts)/;

/**
 * Why a party file's rows are organisations, or null: a file without first and last names whose
 * name, or some column only a company has, says so. Its whole-name column is then the name.
 */
function organisationEvidence(
  file: string,
  header: readonly string[],
  ruleOf: (column: string) => Rule | undefined,
): string | null {
  // A whole name beside a company is a person and where they work: a contact list.
  const company = header.find((column) => ruleOf(column)?.to === 'organisation');
  if (company !== undefined && header.some((column) => ruleOf(column)?.wholeName)) return null;
  const companyColumns = header.filter((column) => ORGANISATION_COLUMNS.has(normalizeWord(column)));
  if (companyColumns.length > 0)
    return `${companyColumns.slice(0, 3).map(q).join(', ')} ${companyColumns.length === 1 ? 'is a column' : 'are columns'} only a company has`;
  const named = normalizeWord(basename(file).replace(/\.[^.]+$/, ''));
  if (ORGANISATION_FILE.test(named)) return `the file is named for companies (${q(basename(file))})`;
  // A company name column and no person's name: the column names the organisation itself.
  return company === undefined ? null : `${q(company)} names a company, and no column a person`;
}

/** `type` (or `Kind`, `Party type` ...) holding only `person` and `organisation`, as the service writes them. */
function isKindColumn(column: string, samples: CellValue[]): boolean {
  if (!['type', 'kind', 'partytype', 'recordtype'].includes(normalizeWord(column))) return false;
  const texts = sampleTexts(samples);
  return texts.length > 0 && texts.every((t) => t === 'person' || t === 'organisation');
}

/**
 * Drafts a mapping from a file's header: reads the header and a few rows through openSource,
 * matches common column names to targets, proposes transforms from the sample values (init-values.ts),
 * places dates, yes/no and numbers of other columns in custom fields, and lists the rest as comments.
 * The key is an id-like column when there is one, else the email column, else the first column.
 */
export async function draftMapping(file: string, options: DraftOptions = {}): Promise<DraftResult> {
  const sampleRows = options.sampleRows ?? 20;
  const opened = await openSource(file, options);
  const samples = new Map<string, CellValue[]>();
  const rows: Array<Readonly<Record<string, CellValue>>> = [];
  let read = 0;
  let firstError: FerryError | undefined;
  let recordKind: string | undefined;
  try {
    for await (const item of opened.items) {
      if (item.kind === 'error') firstError ??= item.error;
      if (item.kind !== 'row') continue;
      recordKind ??= item.recordKind;
      rows.push(item.values);
      for (const [column, value] of Object.entries(item.values)) {
        const list = samples.get(column) ?? [];
        list.push(value);
        samples.set(column, list);
      }
      if (++read >= sampleRows) break;
    }
  } finally {
    await opened.items.return(undefined);
  }
  // Every column of the rows read, in the order they first appear: rows of a legacy v1 export
  // each hold only their own fields (an organisation's name is on no person's row).
  const header = [...samples.keys()];
  if (header.length === 0 && firstError) {
    // Rows there were, but none could be read (an unclosed quote on the first one): say which and why.
    throw new FerryError(
      firstError.code,
      `no row could be read to draft a mapping from; the first: ${firstError.message}`,
      {
        location: { file, ...firstError.location },
        cause: firstError,
        hint: `Run 'crm-ferry inspect ${file}' to see every row error.`,
      },
    );
  }
  if (header.length === 0) {
    throw new FerryError(
      'SOURCE_HEADER',
      'the file has no rows to draft a mapping from: a draft needs the header and at least one row',
      { location: { file } },
    );
  }
  // A legacy export says what its records are: its opportunities are drafted as opportunities.
  const fromFile = recordKind === undefined ? undefined : V1_ENTITIES[recordKind];
  const entity = options.entity ?? fromFile ?? 'party';
  const entityReason =
    options.entity === undefined && fromFile !== undefined ? `the file holds v1 ${recordKind} records` : null;
  const rules = entity === 'party' ? PARTY_RULES : GENERIC_RULES[entity];
  const matched: Array<{ column: string; rule: Rule }> = [];
  const unmatched: string[] = [];
  const taken = new Set<string>();
  const ruleOf = (column: string): Rule | undefined => {
    for (const name of columnNames(column)) {
      const rule = rules.get(normalizeWord(name));
      if (rule) return rule;
    }
    return undefined;
  };
  // A whole-name column is left out when first and last names have columns of their own.
  const namesApart = header.some((column) => {
    const rule = ruleOf(column);
    return rule !== undefined && !rule.wholeName && (rule.to === 'firstName' || rule.to === 'lastName');
  });
  const reasons = new Map<string, string>();
  const organisations = entity === 'party' && !namesApart ? organisationEvidence(file, header, ruleOf) : null;
  // A column saying person or organisation on each row (the service's own export, the legacy v1
  // one): it gives the type, and the whole-name column then names the organisations.
  const kindColumn =
    entity === 'party' ? header.find((column) => isKindColumn(column, samples.get(column) ?? [])) : undefined;
  let wholeNameColumn: string | undefined;
  const numbered =
    entity === 'party' ? numberedEntries(header, samples) : { lines: [], used: [], leftOut: new Map<string, string>() };
  for (const [column, why] of numbered.leftOut) reasons.set(column, why);
  for (const column of header) {
    if (column === kindColumn || numbered.used.includes(column)) continue;
    if (numbered.leftOut.has(column)) {
      unmatched.push(column);
      continue;
    }
    let rule = ruleOf(column);
    if (rule?.wholeName && namesApart) {
      if (kindColumn !== undefined && wholeNameColumn === undefined) {
        wholeNameColumn = column;
        continue;
      }
      reasons.set(column, 'the whole name; first and last names come from their own columns');
      rule = undefined;
    }
    if (rule?.link) {
      reasons.set(column, `names the ${rule.to} of the record: link it with ref to a step of a plan (docs/plans.md)`);
      rule = undefined;
    }
    // An organisation's whole name is its name; a person's title is no organisation's.
    if (organisations !== null && rule?.wholeName) rule = { to: 'name', transform: '[trim]' };
    if (organisations !== null && rule !== undefined && (PERSON_ONLY_TARGETS as readonly string[]).includes(rule.to)) {
      reasons.set(column, `a person's ${rule.to}, and the rows are organisations`);
      rule = undefined;
    }
    const slotOf = (r: Rule): string => (r.part ? `address.${r.part}` : r.to);
    if (rule && taken.has(slotOf(rule)) && !REPEATABLE.has(rule.to) && rule.alt) rule = rule.alt;
    if (!rule || (taken.has(slotOf(rule)) && !REPEATABLE.has(rule.to))) {
      unmatched.push(column);
      continue;
    }
    taken.add(slotOf(rule));
    matched.push({ column, rule });
  }
  const person = matched.some((m) => m.rule.to === 'firstName' || m.rule.to === 'lastName');
  const partyClass =
    entity !== 'party' || kindColumn !== undefined
      ? undefined
      : organisations !== null || !person
        ? 'organisation'
        : 'person';
  const idColumn = header.find(isIdColumn);
  const emailColumn = matched.find((m) => m.rule.to === 'email')?.column;
  const keyColumn = idColumn ?? emailColumn ?? (header[0] as string);
  const key = `{{${keyColumn}}}`;
  // The key column is placed: it identifies the row (and links other steps to it).
  if (idColumn !== undefined && unmatched.includes(idColumn)) unmatched.splice(unmatched.indexOf(idColumn), 1);

  // Dates like 3/2/2019 say nothing of their order; numbers of the United States or Canada, or
  // amounts written 1,234.56, tell that the file writes the month first.
  const usPhones = matched.some(
    (m) =>
      m.rule.to === 'phone' && /\{phone: (US|CA)\}/.test(proposePhone(samples.get(m.column) ?? [])?.transform ?? ''),
  );
  const hint = usPhones ? { monthFirst: 'the phone numbers are North American' } : {};
  const countryColumn = matched.find((m) => m.rule.part === 'country')?.column;
  const addresses = matched
    .filter((m) => m.rule.to === 'email' || m.rule.to === 'website')
    .flatMap((m) => sampleTexts(samples.get(m.column) ?? []));
  const evidence: FileEvidence = {
    hint,
    countryColumn,
    rows,
    countries: addresses.map(countryOfDomain).filter((c): c is CountryCode => c !== undefined),
  };

  const lines: string[] = [
    `# Drafted by crm-ferry mapping init from ${printable(basename(file))} (${opened.format}). Check every entry before use;`,
    '# docs/mapping.md lists every target and transform. The comments say why a transform was chosen.',
    'version: 1',
    `entity: ${entity}${entityReason ? `  # ${entityReason}` : ''}`,
    `key: ${q(key)}${idColumn ? `  # ${q(idColumn)} holds an id for each row` : emailColumn ? '  # no id column found: the email address identifies a row' : '  # no id or email column found: choose a column that identifies a row'}`,
    'fields:',
  ];
  if (organisations !== null)
    lines.push('  - to: type', `    # organisations: ${organisations}`, '    value: organisation');
  const entries: Array<{ column: string; to: string }> = [];
  if (idColumn !== undefined) entries.push({ column: idColumn, to: 'key' });
  const addressParts: Array<{ part: string; column: string }> = [];
  let houseNumber: string | undefined;
  const valueLine = (column: string, transforms: string[], why: string[], indent = '    '): string[] => [
    ...why.map((w) => `${indent}# ${w}`),
    `${indent}value: {column: ${q(column)}${transforms.length > 0 ? `, transform: [${transforms.join(', ')}]` : ''}}`,
  ];
  if (kindColumn !== undefined) {
    lines.push(
      '  - to: type',
      `    # ${q(kindColumn)} says person or organisation for each row`,
      `    value: {column: ${q(kindColumn)}, transform: [trim]}`,
    );
    entries.push({ column: kindColumn, to: 'type' });
    if (wholeNameColumn !== undefined) {
      const when = `{column: ${q(kindColumn)}, equals: organisation}`;
      lines.push(
        '  - to: name',
        `    # the name of the rows that are organisations (people have first and last names)`,
        `    value: {column: ${q(wholeNameColumn)}, transform: [trim], when: ${when}}`,
      );
      entries.push({ column: wholeNameColumn, to: 'name' });
    }
  }
  // The entries of columns, in order, before they are fitted into what a mapping file may hold.
  // A block of entries, or (`leave`) a column left out, with why and its entry once the field exists.
  const blocks: Array<{
    entries: Array<{ column: string; to: string }>;
    lines: string[];
    leave?: NotCarried & { entry: string[] };
  }> = [];
  for (const { column, rule } of matched) {
    const columnSamples = samples.get(column) ?? [];
    if (rule.to === 'address' && rule.part) {
      if (rule.part === 'houseNumber') houseNumber = column;
      else addressParts.push({ part: rule.part, column });
      // The address entry is written after the others, whatever fits; its place among the columns is kept.
      blocks.push({ entries: [{ column, to: 'address' }], lines: [] });
      continue;
    }
    let to = rule.to;
    // Without person columns the company column names the organisation itself.
    if (to === 'organisation' && !person) to = 'name';
    const { transforms, why } = transformsFor(column, to, rule, columnSamples, evidence);
    // A number its country does not have is left out with a warning, as a malformed address is: the person is kept.
    const checked =
      to === 'phone' && transforms.some((t) => t === 'phone' || t.startsWith('{phone:')) ? PHONE_CHECKED : [];
    blocks.push({
      entries: [{ column, to }],
      lines: [
        `  - to: ${to}`,
        ...[...(rule.extra ?? []), ...checked].map((l) => `    ${l}`),
        ...valueLine(column, transforms, why),
      ],
    });
  }
  if (numbered.lines.length > 0)
    blocks.push({
      entries: numbered.used.map((column) => ({ column, to: NUMBERED.exec(column)?.[1] as string })),
      lines: numbered.lines,
    });
  // Columns no standard field takes go to the account's custom fields of their name that take
  // their values; the rest are left out, each with the field to create. Ids of other records
  // (links for a plan) and empty columns stay listed. The key column is carried too when the
  // account has a field for it (a company's registry number).
  const customColumns = CUSTOM_ENTITIES.has(entity)
    ? [...(idColumn !== undefined && options.customFields !== undefined ? [idColumn] : []), ...unmatched]
    : [];
  for (const column of customColumns) {
    if (reasons.has(column)) continue;
    const columnSamples = samples.get(column) ?? [];
    // The key's column is read already: carried too only where the account has a field for it.
    const isKey = column === keyColumn;
    if (!isKey && isLinkColumn(column)) {
      reasons.set(column, 'ids of records in another file: link them with ref in a plan (docs/plans.md)');
      continue;
    }
    if (columnSamples.every((v) => v === null || (typeof v === 'string' && v.trim() === ''))) {
      if (!isKey) reasons.set(column, `empty in the first ${read} rows`);
      continue;
    }
    const home = fieldHomeOf(column, column.replace(RECORD_PREFIX, ''), columnSamples, {
      fields: options.customFields,
      hint,
      partyClass,
    });
    if (home.kind === 'none') {
      if (isKey) continue;
      blocks.push({ entries: [], lines: [], leave: { column, why: home.why, entry: home.entry } });
    } else {
      const { definition } = home;
      blocks.push({
        entries: [{ column, to: 'custom' }],
        lines: [
          '  - to: custom',
          `    definition: ${q(definition.name)}  # the account's ${definition.type ?? 'custom'} field${definition.tag === null ? '' : ` of the data tag ${q(definition.tag)}`}`,
          `    tag: ${definition.tag === null ? 'null' : q(definition.tag)}`,
          ...valueLine(column, [home.transform], [home.why]),
        ],
      });
    }
    if (!isKey) unmatched.splice(unmatched.indexOf(column), 1);
  }
  // What a mapping file may hold (load.ts refuses more): the entries that fit, in order; the
  // columns of the others are listed as not mapped, so the draft still loads. A room is kept for
  // the lines around the entries (the address, the comments, the columns not mapped).
  const leftOut: string[] = [];
  let fields = 0;
  let bytes = Buffer.byteLength(lines.join('\n')) + DRAFT_ROOM_BYTES;
  const notCarried: NotCarried[] = [];
  const toCreate: string[] = [];
  for (const block of blocks) {
    if (block.leave !== undefined) {
      // Its leaveOut line, and for the first few its entry as a comment (the others are written alike).
      const { column, why, entry } = block.leave;
      const shown = notCarried.length < MAX_ENTRIES_SHOWN ? entry : [];
      const size = Buffer.byteLength(`  ${q(column)}: ${q(why)}\n${shown.join('\n')}`) + 1;
      if (leftOut.length > 0 || bytes + size > MAX_MAPPING_BYTES) {
        leftOut.push(column);
        continue;
      }
      bytes += size;
      notCarried.push({ column, why });
      toCreate.push(...shown);
      continue;
    }
    const size = Buffer.byteLength(block.lines.join('\n')) + 1;
    const count = block.lines.filter((line) => line.startsWith('  - to: ')).length;
    if (
      block.lines.length > 0 &&
      (leftOut.length > 0 ||
        fields + count > MAX_MAPPING_FIELDS - DRAFT_ROOM_FIELDS ||
        bytes + size > MAX_MAPPING_BYTES)
    ) {
      for (const { column } of block.entries) leftOut.push(column);
      continue;
    }
    fields += count;
    bytes += size;
    lines.push(...block.lines);
    entries.push(...block.entries);
  }
  if (leftOut.length > 0) {
    lines.push(
      `  # ${formatCount(leftOut.length)} more columns are not drafted (from ${q(leftOut[0] as string)} on): a mapping file holds at most`,
      `  # ${formatCount(MAX_MAPPING_FIELDS)} entries and ${MAX_MAPPING_BYTES / (1024 * 1024)} MB. Carry them in another mapping (a second step of a plan), or leave them out.`,
    );
    for (const column of leftOut) {
      reasons.set(column, 'not drafted: the mapping would be over its limits');
      unmatched.push(column);
    }
  }
  if (addressParts.length > 0 || houseNumber !== undefined) {
    const street = addressParts.find((p) => p.part === 'street');
    if (houseNumber !== undefined && street === undefined)
      addressParts.unshift({ part: 'street', column: houseNumber });
    lines.push('  - to: address', '    type: Work', '    parts:');
    for (const { part, column } of addressParts) {
      // The street and its house number make one street line, as the service keeps it.
      if (part === 'street' && houseNumber !== undefined && column !== houseNumber)
        lines.push(`      street: {template: ${q(`{{${column}}} {{${houseNumber}}}`)}, transform: [trim]}`);
      else lines.push(`      ${part}: {column: ${q(column)}, transform: [trim]}`);
    }
  }
  if (entries.every((e) => e.to === 'key')) {
    const fallback =
      entity === 'party' ? 'name' : entity === 'entry' ? 'content' : entity === 'task' ? 'description' : 'name';
    const column = unmatched[0] ?? (header[0] as string);
    lines.push(`  - to: ${fallback}  # no column name was recognised: a guess`, `    value: {column: ${q(column)}}`);
    entries.push({ column, to: fallback });
    if (unmatched.includes(column)) unmatched.splice(unmatched.indexOf(column), 1);
  }
  if (entity !== 'party') {
    lines.push(
      '  # Link the records to a party created by another step, e.g.:',
      '  # - to: party',
      '  #   ref: people',
      `  #   key: ${q(key)}`,
    );
  }
  if (entity === 'task' && !entries.some((e) => e.to === 'dueOn'))
    lines.push(
      '  # A task needs a due date:',
      '  # - to: dueOn',
      '  #   value: {column: "Due", transform: [{date: "dd.MM.yyyy"}]}',
    );
  if (entity === 'opportunity')
    lines.push('  # An opportunity needs a milestone (and a pipeline when names repeat across pipelines).');
  if (notCarried.length > 0) {
    lines.push(
      options.customFields === undefined
        ? '# Not carried: no standard field takes these columns, and a draft made offline does not know the'
        : '# Not carried: no standard field takes these columns, and the account has no custom field that',
      options.customFields === undefined
        ? "# account's custom fields (mapping init --online does). To carry one, do what its line says, then"
        : '# takes them. To carry one, do what its line says, then move its entry (below) into fields:',
      ...(options.customFields === undefined ? ['# move its entry (below) into fields:'] : []),
      ...toCreate.map((line) => `# ${line}`),
      ...(notCarried.length > MAX_ENTRIES_SHOWN
        ? [`#   (and the ${formatCount(notCarried.length - MAX_ENTRIES_SHOWN)} others alike)`]
        : []),
      'leaveOut:',
      ...notCarried.map(({ column, why }) => `  ${q(column)}: ${q(why)}`),
    );
  }
  if (unmatched.length > 0) {
    lines.push('# Columns not mapped (add entries for them, or leave them out):');
    for (const column of unmatched.slice(0, MAX_NAMES_SHOWN))
      lines.push(`#   ${shortName(column)}${reasons.has(column) ? `: ${reasons.get(column)}` : ''}`);
    if (unmatched.length > MAX_NAMES_SHOWN)
      lines.push(
        `#   and ${formatCount(unmatched.length - MAX_NAMES_SHOWN)} more (crm-ferry inspect lists every column)`,
      );
  }
  return {
    yaml: `${lines.join('\n')}\n`,
    header,
    matched: entries,
    unmatched,
    leftOut,
    key,
    entity,
    entityReason,
    notCarried,
    organisations,
  };
}
