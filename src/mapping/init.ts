import { basename } from 'node:path';
import { FerryError } from '../errors/index.ts';
import { openSource } from '../sources/index.ts';
import type { OpenSourceOptions } from '../sources/index.ts';
import type { CellValue } from '../sources/types.ts';
import type { Entity } from './schema.ts';
import { normalizeWord } from './suggest.ts';

/** Options of draftMapping. */
export interface DraftOptions extends OpenSourceOptions {
  /** What each row becomes. @default 'party' */
  entity?: Entity;
  /** Rows read for samples (tag separators, whether a column holds ids). @default 20 */
  sampleRows?: number;
}

export interface DraftResult {
  /** The drafted mapping file, with comments; it loads and compiles. */
  yaml: string;
  header: string[];
  /** Column -> target it was mapped to. */
  matched: Array<{ column: string; to: string }>;
  unmatched: string[];
  /** The column or template chosen as the key. */
  key: string;
}

/** What a draft entry writes for a matched column. */
interface Rule {
  to: string;
  /** Extra YAML lines of the entry (after `to` and before `value`). */
  extra?: string[];
  transform?: string;
  /** Address part, when `to` is address. */
  part?: 'street' | 'city' | 'state' | 'zip' | 'country';
}

const word = (names: string[], rule: Rule): Array<[string, Rule]> => names.map((n) => [normalizeWord(n), rule]);

// Header names seen in exports of spreadsheets and CRMs, in English, French, German, Spanish,
// Dutch and Italian, compared without case, accents, spaces or punctuation ("E-Mail Address" =
// "emailaddress", "Société" = "societe").
const PARTY_RULES = new Map<string, Rule>([
  ...word(['First Name', 'Firstname', 'Given name', 'Forename', 'Vorname', 'Prénom', 'First', 'Nombre', 'Voornaam', 'Nome'], { to: 'firstName', transform: '[trim]' }),
  ...word(['Last Name', 'Lastname', 'Surname', 'Family name', 'Nachname', 'Familienname', 'Nom', 'Nom de famille', 'Last', 'Apellido', 'Apellidos', 'Achternaam', 'Cognome'], { to: 'lastName', transform: '[trim]' }),
  ...word(['Name', 'Full Name', 'Contact Name', 'Contact', 'Person'], {
    to: 'lastName',
    extra: ['# the whole name goes to lastName: split it into firstName and lastName if the file allows'],
    transform: '[trim]',
  }),
  ...word(['Title', 'Salutation', 'Anrede', 'Civilité', 'Titre', 'Tratamiento', 'Aanhef', 'Titolo'], { to: 'title', transform: '[trim]' }),
  ...word(['Job Title', 'Jobtitle', 'Position', 'Role', 'Berufsbezeichnung', 'Funktion', 'Fonction', 'Poste', 'Cargo', 'Puesto', 'Functie', 'Ruolo', 'Qualifica'], { to: 'jobTitle', transform: '[trim]' }),
  ...word(['Company', 'Company Name', 'Organisation', 'Organization', 'Organisation Name', 'Organization Name', 'Account Name', 'Account', 'Firma', 'Unternehmen', 'Employer', 'Société', 'Entreprise', 'Empresa', 'Compañía', 'Bedrijf', 'Organisatie', 'Azienda', 'Società', 'Ditta'], {
    to: 'organisation',
    transform: '[trim]',
  }),
  ...word(['E-mail', 'Email', 'Email Address', 'E-mail Address', 'Mail', 'Work Email', 'E-Mail-Adresse', 'Emailaddress', 'Courriel', 'Adresse e-mail', 'Correo', 'Correo electrónico', 'E-mailadres', 'Posta elettronica'], { to: 'email', extra: ['type: Work'], transform: '[trim, lowercase]' }),
  ...word(['Mobile', 'Mobile Phone', 'Mobile Number', 'Cell', 'Cell Phone', 'Handy', 'Mobiltelefon', 'Portable', 'Téléphone portable', 'Móvil', 'Celular', 'Mobiel', 'Cellulare'], { to: 'phone', extra: ['type: Mobile'], transform: '[trim]' }),
  ...word(['Phone', 'Phone Number', 'Telephone', 'Tel', 'Telefon', 'Telefonnummer', 'Work Phone', 'Business Phone', 'Téléphone', 'Teléfono', 'Telefoon', 'Telefoonnummer', 'Telefono'], { to: 'phone', extra: ['type: Work'], transform: '[trim]' }),
  ...word(['Fax', 'Fax Number'], { to: 'phone', extra: ['type: Fax'], transform: '[trim]' }),
  ...word(['Street', 'Address', 'Street Address', 'Address Line 1', 'Address 1', 'Strasse', 'Straße', 'Mailing Street', 'Adresse', 'Rue', 'Dirección', 'Calle', 'Adres', 'Straat', 'Indirizzo'], { to: 'address', part: 'street' }),
  ...word(['City', 'Town', 'Ort', 'Stadt', 'Mailing City', 'Ville', 'Ciudad', 'Localidad', 'Plaats', 'Woonplaats', 'Città', 'Comune'], { to: 'address', part: 'city' }),
  ...word(['State', 'Region', 'County', 'Province', 'Bundesland', 'Mailing State', 'Département', 'Provincia', 'Estado', 'Provincie', 'Regione'], { to: 'address', part: 'state' }),
  ...word(['Postcode', 'Post Code', 'Zip', 'Zip Code', 'Postal Code', 'PLZ', 'Postleitzahl', 'Mailing Zip', 'Code postal', 'CP', 'Código postal', 'CAP'], { to: 'address', part: 'zip' }),
  ...word(['Country', 'Land', 'Mailing Country', 'Pays', 'País', 'Paese', 'Nazione'], { to: 'address', part: 'country' }),
  ...word(['Website', 'Web Site', 'URL', 'Homepage', 'Web', 'Webseite', 'Site web', 'Site internet', 'Sitio web', 'Página web', 'Sito web'], { to: 'website', transform: '[trim]' }),
  ...word(['Tags', 'Tag', 'Labels', 'Label', 'Schlagworte', 'Schlagwörter', 'Étiquettes', 'Étiquette', 'Mots-clés', 'Etiquetas', 'Etiketten', 'Etichette'], { to: 'tags' }),
  ...word(['Notes', 'Note', 'About', 'Description', 'Comments', 'Comment', 'Bemerkung', 'Bemerkungen', 'Notizen', 'Anmerkungen', 'Remarques', 'Commentaires', 'Notas', 'Observaciones', 'Opmerkingen', 'Notities', 'Commenti'], { to: 'about' }),
  ...word(['Owner', 'Contact Owner', 'Account Manager', 'Account Owner', 'Betreuer', 'Propriétaire', 'Responsable', 'Propietario', 'Eigenaar', 'Proprietario', 'Responsabile'], { to: 'owner', transform: '[trim]' }),
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
    ...word(['Name', 'Opportunity', 'Opportunity Name', 'Deal', 'Deal Name', 'Title'], { to: 'name', transform: '[trim]' }),
    ...word(['Description', 'Details', 'Notes'], { to: 'description' }),
    ...word(['Pipeline'], { to: 'pipeline', transform: '[trim]' }),
    ...word(['Milestone', 'Stage', 'Deal Stage'], { to: 'milestone', transform: '[trim]' }),
    ...word(['Amount', 'Value', 'Deal Value'], { to: 'amount', transform: '[number]' }),
    ...word(['Currency', 'Currency Code'], { to: 'currency', transform: '[trim, uppercase]' }),
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
  ]),
};

// Targets written once; a second column matching one is left unmatched (listed in the comments).
const REPEATABLE = new Set(['phone', 'email', 'website', 'tags']);

const q = (text: string): string => JSON.stringify(text);

/**
 * Whether a column holds ids: "ID", "Customer ID", "Kundennummer", "Réf client", "Référence",
 * "Nr", "Número de cliente", "Codice cliente", "Klantnummer". Phone, tax and postal numbers are not.
 */
function isIdColumn(column: string): boolean {
  const plain = normalizeWord(column);
  if (/phone|fax|mobile|tel|vat|tax|zip|post|iban|siret|siren|currency/.test(plain)) return false;
  return (
    plain === 'id' ||
    plain === 'key' ||
    /(^|[a-z])(id|nr|no|number|nummer)$/.test(plain) ||
    /^(ref|reference|referenz|referencia|riferimento)/.test(plain) ||
    /^(kundennummer|klantnummer|numero|codice|code)/.test(plain)
  );
}

function tagSeparator(samples: CellValue[]): string {
  const texts = samples.filter((s): s is string => typeof s === 'string');
  if (texts.some((t) => t.includes(';'))) return ';';
  if (texts.some((t) => t.includes('|'))) return '|';
  return ',';
}

/**
 * Drafts a mapping from a file's header: reads the header and a few rows through openSource,
 * matches common column names to targets, and lists the columns it could not place as comments.
 * The key is an id-like column when there is one, else the email column, else the first column.
 */
export async function draftMapping(file: string, options: DraftOptions = {}): Promise<DraftResult> {
  const entity = options.entity ?? 'party';
  const sampleRows = options.sampleRows ?? 20;
  const opened = await openSource(file, options);
  let header: string[] | undefined;
  const samples = new Map<string, CellValue[]>();
  let read = 0;
  try {
    for await (const item of opened.items) {
      if (item.kind !== 'row') continue;
      header ??= Object.keys(item.values);
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
  if (!header || header.length === 0) {
    throw new FerryError('SOURCE_HEADER', 'the file has no rows to draft a mapping from: a draft needs the header and at least one row', { location: { file } });
  }
  const rules = entity === 'party' ? PARTY_RULES : GENERIC_RULES[entity];
  const matched: Array<{ column: string; rule: Rule }> = [];
  const unmatched: string[] = [];
  const taken = new Set<string>();
  for (const column of header) {
    const rule = rules.get(normalizeWord(column));
    const slot = rule ? (rule.part ? `address.${rule.part}` : rule.to) : '';
    if (!rule || (taken.has(slot) && !REPEATABLE.has(rule.to))) {
      unmatched.push(column);
      continue;
    }
    taken.add(slot);
    matched.push({ column, rule });
  }
  const person = matched.some((m) => m.rule.to === 'firstName' || m.rule.to === 'lastName');
  const idColumn = header.find(isIdColumn);
  const emailColumn = matched.find((m) => m.rule.to === 'email')?.column;
  const keyColumn = idColumn ?? emailColumn ?? (header[0] as string);
  const key = `{{${keyColumn}}}`;

  const lines: string[] = [
    `# Drafted by crm-ferry mapping init from ${basename(file)} (${opened.format}). Check every entry before use;`,
    '# docs/mapping.md lists every target and transform.',
    'version: 1',
    `entity: ${entity}`,
    `key: ${q(key)}${idColumn ? '' : emailColumn ? '  # no id column found: the email address identifies a row' : '  # no id or email column found: choose a column that identifies a row'}`,
    'fields:',
  ];
  const entries: Array<{ column: string; to: string }> = [];
  const addressParts: string[] = [];
  for (const { column, rule } of matched) {
    const value = `{column: ${q(column)}${rule.transform ? `, transform: ${rule.transform}` : ''}}`;
    if (rule.to === 'address' && rule.part) {
      addressParts.push(`      ${rule.part}: {column: ${q(column)}, transform: [trim]}`);
      entries.push({ column, to: 'address' });
      continue;
    }
    let to = rule.to;
    // Without person columns the company column names the organisation itself.
    if (to === 'organisation' && !person) to = 'name';
    if (to === 'tags') {
      lines.push(`  - to: tags`, `    value: {column: ${q(column)}, transform: [{split: ${q(tagSeparator(samples.get(column) ?? []))}}]}`);
    } else {
      lines.push(`  - to: ${to}`, ...(rule.extra ?? []).map((l) => `    ${l}`), `    value: ${value}`);
    }
    entries.push({ column, to });
  }
  if (addressParts.length > 0) lines.push('  - to: address', '    type: Work', '    parts:', ...addressParts);
  if (entries.length === 0) {
    const fallback = entity === 'party' ? 'name' : entity === 'entry' ? 'content' : entity === 'task' ? 'description' : 'name';
    const column = header[0] as string;
    lines.push(`  - to: ${fallback}  # no column name was recognised: a guess`, `    value: {column: ${q(column)}}`);
    entries.push({ column, to: fallback });
    unmatched.splice(unmatched.indexOf(column), 1);
  }
  if (entity !== 'party') {
    lines.push(
      '  # Link the records to a party created by another step, e.g.:',
      '  # - to: party',
      '  #   ref: people',
      `  #   key: ${q(key)}`,
    );
  }
  if (entity === 'task') lines.push('  # A task needs a due date:', '  # - to: dueOn', '  #   value: {column: "Due", transform: [{date: "dd.MM.yyyy"}]}');
  if (entity === 'opportunity') lines.push('  # An opportunity needs a milestone (and a pipeline when names repeat across pipelines).');
  if (unmatched.length > 0) {
    lines.push('# Columns not mapped (add entries for them, or leave them out):');
    for (const column of unmatched) lines.push(`#   ${q(column)}`);
  }
  return { yaml: `${lines.join('\n')}\n`, header, matched: entries, unmatched, key };
}
