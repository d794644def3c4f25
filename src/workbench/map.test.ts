import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AccountCatalog,
  createResolver,
  type NameResolver,
  offlineResolver,
  parseMapping,
} from '../mapping/index.ts';
import { ReferenceBook } from '../plan/index.ts';
import type { MapEdit, PreviewRow } from './api.ts';
import { applyEdit, parseEdit } from './map-edit.ts';
import { targetChoices } from './map-entries.ts';
import { previewRows, readSample, readStepKeys, type Sample, samplesOf } from './map-preview.ts';
import { matchChoices, tableOf } from './map-table.ts';

const YAML = `# People of the sheet
version: 1
entity: party
key: "{{email}}"
fields:
  - to: firstName
    value: {column: "first", transform: [trim, lowercase]}  # kept as typed
  - to: custom
    definition: "Joined"
    tag: null
    value: {column: "joined", transform: [date]}
  - to: address
    type: Work
    parts:
      city: {column: "city"}
`;

/** A target list value, as the page sends it back. */
const target = (t: {
  to: string;
  part?: string;
  definition?: string;
  tag?: string | null;
  ref?: string | string[];
}): string =>
  JSON.stringify({
    to: t.to,
    part: t.part,
    definition: t.definition,
    tag: t.definition === undefined ? undefined : (t.tag ?? null),
    ref: t.ref,
  });

const dir = mkdtempSync(join(tmpdir(), 'ferry-map-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('applyEdit: the table edits the YAML, keeping the rest as written', () => {
  const cases: Array<[string, MapEdit[], RegExp[], RegExp[]]> = [
    [
      'a new target for a column no field reads',
      [{ kind: 'target', column: 'email', target: target({ to: 'email' }) }],
      [/- to: email\n\s+type: Work\n\s+value: \{column: email\}/],
      [],
    ],
    [
      'another target for a mapped column, in place',
      [{ kind: 'target', column: 'first', target: target({ to: 'lastName' }) }],
      [/- to: lastName\n\s+value: \{column: "first", transform: \[trim, lowercase\]\} # kept as typed/],
      [/to: firstName/],
    ],
    [
      'a custom field of the account, with its tag',
      [
        {
          kind: 'target',
          column: 'first',
          target: target({ to: 'custom', definition: 'Contract end', tag: 'Customer' }),
        },
      ],
      [/- to: custom\n\s+value: .*\n\s+definition: Contract end\n\s+tag: Customer/],
      [],
    ],
    ['a column left out', [{ kind: 'target', column: 'joined', target: '' }], [], [/joined/, /Joined/]],
    [
      'a part of the address there',
      [{ kind: 'target', column: 'street', target: target({ to: 'address', part: 'street' }) }],
      [/parts:\n\s+city: \{column: "city"\}\n\s+street: \{column: street\}/],
      [/to: address[\s\S]*to: address/],
    ],
    [
      'a second address once the first has the part',
      [{ kind: 'target', column: 'home', target: target({ to: 'address', part: 'city' }) }],
      [/- to: address\n\s+type: Work\n\s+parts:\n\s+city: \{column: home\}/, /city: \{column: "city"\}/],
      [],
    ],
    [
      'an address part made a phone: the part leaves the address, the address goes when empty',
      [{ kind: 'target', column: 'city', target: target({ to: 'phone' }) }],
      [/- to: phone\n\s+type: Work\n\s+value: \{column: "city"\}/],
      [/to: address/],
    ],
    [
      'a phone made a tag: the type goes',
      [
        { kind: 'target', column: 'tel', target: target({ to: 'phone' }) },
        { kind: 'target', column: 'tel', target: target({ to: 'tags' }) },
      ],
      [/- to: tags\n\s+value: \{column: tel\}/],
      [/to: phone/, /type: Work\n\s+value: \{column: tel/],
    ],
    [
      'the type of a phone, a constant',
      [
        { kind: 'target', column: 'tel', target: target({ to: 'phone' }) },
        { kind: 'type', column: 'tel', type: '"Mobile"' },
      ],
      [/- to: phone\n\s+type: Mobile\n\s+value: \{column: tel\}/],
      [],
    ],
    [
      'the type of a phone, read from a column',
      [
        { kind: 'target', column: 'tel', target: target({ to: 'phone' }) },
        { kind: 'type', column: 'tel', type: '{"column":"kind"}' },
      ],
      [/- to: phone\n\s+type: \{column: kind\}/],
      [],
    ],
    [
      "an address part sets the whole address's type",
      [{ kind: 'type', column: 'city', type: '"Home"' }],
      [/- to: address\n\s+type: Home/],
      [],
    ],
    ['no type', [{ kind: 'type', column: 'city', type: '' }], [/- to: address\n\s+parts:/], [/type:/]],
    [
      "a website's service",
      [
        { kind: 'target', column: 'site', target: target({ to: 'website' }) },
        { kind: 'service', column: 'site', service: '"LINKED_IN"' },
      ],
      [/- to: website\n\s+type: Work\n\s+value: \{column: site\}\n\s+service: LINKED_IN/],
      [],
    ],
    [
      'a link to another step by key',
      [{ kind: 'target', column: 'company id', target: target({ to: 'organisation', ref: 'companies' }) }],
      [/- to: organisation\n\s+ref: companies\n\s+key: "\{\{company id\}\}"/],
      [],
    ],
    [
      'a link and a name of one organisation are one entry: the name is written when the link finds no row',
      [
        { kind: 'target', column: 'company id', target: target({ to: 'organisation', ref: 'companies' }) },
        { kind: 'target', column: 'company', target: target({ to: 'organisation' }) },
      ],
      [/- to: organisation\n\s+ref: companies\n\s+key: "\{\{company id\}\}"\n\s+value: \{column: company\}/],
      [/to: organisation[\s\S]*to: organisation/],
    ],
    [
      'the name first, then the link: one entry',
      [
        { kind: 'target', column: 'company', target: target({ to: 'organisation' }) },
        { kind: 'target', column: 'company id', target: target({ to: 'organisation', ref: 'companies' }) },
      ],
      [/- to: organisation\n\s+value: \{column: company\}\n\s+ref: companies\n\s+key: "\{\{company id\}\}"/],
      [/to: organisation[\s\S]*to: organisation/],
    ],
    [
      "the link's key column left out: the name stays, as a plain organisation",
      [
        { kind: 'target', column: 'company', target: target({ to: 'organisation' }) },
        { kind: 'target', column: 'company id', target: target({ to: 'organisation', ref: 'companies' }) },
        { kind: 'target', column: 'company id', target: '' },
      ],
      [/- to: organisation\n\s+value: \{column: company\}\n/],
      [/ref:/, /key: "\{\{company/],
    ],
    [
      'a transform with its options',
      [{ kind: 'transform', column: 'joined', transform: 'date', param: 'dd.MM.yyyy' }],
      [/transform: \[\{date: dd\.MM\.yyyy\}\]/],
      [],
    ],
    [
      'the last transform replaced, the ones before kept',
      [{ kind: 'transform', column: 'first', transform: 'uppercase', param: '' }],
      [/transform: \[trim, uppercase\]/],
      [],
    ],
    [
      "an address part's transform",
      [{ kind: 'transform', column: 'city', transform: 'titlecase', param: '' }],
      [/city: \{column: "city", transform: \[titlecase\]\}/],
      [],
    ],
    ['required', [{ kind: 'required', column: 'first', required: true }], [/required: true/], []],
    [
      'required on a link',
      [
        { kind: 'target', column: 'company id', target: target({ to: 'organisation', ref: 'companies' }) },
        { kind: 'required', column: 'company id', required: true },
      ],
      [/key: "\{\{company id\}\}"\n\s+required: true/],
      [],
    ],
    ['what a bad value does', [{ kind: 'onInvalid', column: 'joined', onInvalid: 'drop' }], [/onInvalid: drop/], []],
    ['rows with one key', [{ kind: 'onDuplicate', onDuplicate: 'merge' }], [/^onDuplicate: merge$/m], []],
    [
      'records found by a fallback list',
      [{ kind: 'match', match: 'email, name' }],
      [/^match: \{by: \[email, name\], onMatch: update\}$/m],
      [],
    ],
    [
      'records found by a custom field',
      [{ kind: 'match', match: 'custom:Joined' }],
      [/^match: \{by: custom, definition: Joined, onMatch: update\}$/m],
      [],
    ],
    [
      'found by nothing',
      [
        { kind: 'match', match: 'email' },
        { kind: 'match', match: '' },
      ],
      [],
      [/match:/],
    ],
  ];
  it.each(cases)('%s', (_what, edits, present, absent) => {
    let out = YAML;
    for (const edit of edits) out = applyEdit(out, parseEdit(edit));
    for (const pattern of present) expect(out).toMatch(pattern);
    for (const pattern of absent) expect(out).not.toMatch(pattern);
    // Comments and the entries not edited stay.
    expect(out).toContain('# People of the sheet');
    if (!edits.some((e) => 'column' in e && e.column === 'first'))
      expect(out).toContain('value: {column: "first", transform: [trim, lowercase]} # kept as typed');
    expect(() => parseMapping(out, 'm.yaml')).not.toThrow();
  });

  it('keeps a file that pads its braces padded', () => {
    const padded = YAML.replace('{column: "city"}', '{ column: "city" }').replace(
      '{column: "joined", transform: [date]}',
      '{ column: "joined", transform: [date] }',
    );
    const out = applyEdit(padded.replace('{column: "first", transform: [trim, lowercase]}', '{ column: "first" }'), {
      kind: 'target',
      column: 'email',
      target: target({ to: 'email' }),
    });
    expect(out).toContain('value: { column: email }');
  });

  it('refuses what the table does not edit, and says what to do', () => {
    expect(() => applyEdit(YAML, { kind: 'required', column: 'nowhere', required: true })).toThrow(
      /in a form the table edits/,
    );
    expect(() => applyEdit('fields: [', { kind: 'onDuplicate', onDuplicate: 'merge' })).toThrow(/fix them/);
    expect(() => applyEdit(YAML, { kind: 'transform', column: 'first', transform: 'nosuch', param: '' })).toThrow(
      /no transform/,
    );
    expect(() => applyEdit(YAML, { kind: 'type', column: 'first', type: '"Work"' })).toThrow(/firstName has no type/);
    expect(() => applyEdit(YAML, { kind: 'type', column: 'city', type: '42' })).toThrow(
      /neither a constant nor a column/,
    );
    expect(() =>
      applyEdit(YAML, { kind: 'target', column: 'first', target: target({ to: 'firstName', ref: 'people' }) }),
    ).toThrow(/cannot link/);
    expect(() =>
      applyEdit(YAML, { kind: 'target', column: 'first', target: target({ to: 'address', part: 'planet' }) }),
    ).toThrow(/no part of an address/);
    expect(() => applyEdit(YAML, { kind: 'target', column: 'first', target: '{"to":"milestone"}' })).toThrow(
      /not a target of entity party/,
    );
    expect(() => applyEdit(YAML, { kind: 'target', column: 'first', target: 'firstName' })).toThrow(
      /not a target of the list/,
    );
    const linked = applyEdit(YAML, {
      kind: 'target',
      column: 'company id',
      target: target({ to: 'organisation', ref: 'companies' }),
    });
    expect(() => applyEdit(linked, { kind: 'transform', column: 'company id', transform: 'trim', param: '' })).toThrow(
      /a link's key, which takes no transform/,
    );
    expect(() =>
      applyEdit(YAML, { kind: 'target', column: 'a}}b', target: target({ to: 'organisation', ref: 'companies' }) }),
    ).toThrow(/cannot be a link's key/);
    expect(() => parseEdit({ kind: 'target', column: 'first', to: 'email' })).toThrow(/does not know/);
    expect(() => parseEdit({ kind: 'onDuplicate', onDuplicate: 'twice' })).toThrow(/does not know/);
  });
});

describe('a chain of transforms, and the comments that follow the edits', () => {
  /** As `mapping init` drafts them: a comment line above a key says why it was chosen. */
  const DRAFT = `version: 1
entity: party
key: "{{email}}"
fields:
  - to: email
    type: Work
    # a malformed address is left out of the record, with a warning
    onInvalid: drop
    value: {column: "email", transform: [trim]}
  - to: phone
    type: Work
    # the country of these numbers could not be told: add {phone: XX} to normalise them
    value: {column: "tel", transform: [trim]}  # the desk line
  - to: custom
    definition: "Lid sinds"  # no standard field: a custom field of this name
    tag: null
    # dates written as dd-MM-yyyy ("01-02-2020")
    value: {column: "since", transform: [{date: dd-MM-yyyy}]}
`;
  const chain = (column: string, links: Array<[string, string]>): MapEdit => ({
    kind: 'chain',
    column,
    chain: links.map(([transform, param]) => ({ transform, param })),
  });

  it('adds email after trim, keeping trim; moves, changes options and removes links in place', () => {
    const added = applyEdit(
      DRAFT,
      parseEdit(
        chain('email', [
          ['trim', ''],
          ['email', ''],
        ]),
      ),
    );
    expect(added).toContain('value: {column: "email", transform: [trim, email]}');
    const moved = applyEdit(
      added,
      parseEdit(
        chain('email', [
          ['email', ''],
          ['trim', ''],
        ]),
      ),
    );
    expect(moved).toContain('transform: [email, trim]');
    const options = applyEdit(
      DRAFT,
      parseEdit(
        chain('tel', [
          ['trim', ''],
          ['phone', 'NL'],
        ]),
      ),
    );
    expect(options).toContain('transform: [trim, {phone: NL}]');
    const none = applyEdit(DRAFT, parseEdit(chain('tel', [])));
    expect(none).toMatch(/value: \{column: "tel"\}/);
    expect(() => parseMapping(options, 'm.yaml')).not.toThrow();
    expect(() =>
      applyEdit(
        DRAFT,
        parseEdit(
          chain('tel', [
            ['trim', ''],
            ['nosuch', ''],
          ]),
        ),
      ),
    ).toThrow(/no transform "nosuch"/);
    expect(() => parseEdit({ kind: 'chain', column: 'tel', chain: [{ transform: '', param: '' }] })).toThrow(
      /does not know/,
    );
  });

  it('the table reads the chain back, in order', () => {
    const yaml = applyEdit(
      DRAFT,
      parseEdit(
        chain('tel', [
          ['trim', ''],
          ['phone', 'NL'],
        ]),
      ),
    );
    const table = tableOf(parse(yaml), ['email', 'tel', 'since'], new Map());
    const tel = table.columns.find((c) => c.name === 'tel')?.entries[0];
    expect(tel?.chain).toEqual([
      { transform: 'trim', param: '' },
      { transform: 'phone', param: 'NL' },
    ]);
  });

  it("drops the comment that says why a transform was chosen once the table changes the transforms; the value's own note stays", () => {
    const out = applyEdit(
      DRAFT,
      parseEdit(
        chain('tel', [
          ['trim', ''],
          ['phone', 'NL'],
        ]),
      ),
    );
    expect(out).not.toContain('could not be told');
    expect(out).toContain('# the desk line');
    // The other entries' comments stay as written.
    expect(out).toContain('# a malformed address is left out');
    expect(out).toContain('# dates written as dd-MM-yyyy');
  });

  it("drops an entry's comments about its target once the table gives it another", () => {
    const out = applyEdit(DRAFT, parseEdit({ kind: 'target', column: 'since', target: target({ to: 'about' }) }));
    expect(out).not.toContain('no standard field');
    expect(out).not.toContain('dates written as');
    expect(out).toMatch(/- to: about\n\s+value: \{column: "since"/);
    const email = applyEdit(DRAFT, parseEdit({ kind: 'onInvalid', column: 'email', onInvalid: 'reject' }));
    expect(email).not.toContain('left out of the record');
    expect(email).toContain('onInvalid: reject');
  });
});

describe('the table reads every form it writes back', () => {
  const header = ['first', 'email', 'joined', 'city', 'street', 'tel', 'kind', 'site', 'company id', 'company', 'note'];
  let yaml = YAML;
  for (const edit of [
    { kind: 'target', column: 'street', target: target({ to: 'address', part: 'street' }) },
    { kind: 'target', column: 'tel', target: target({ to: 'phone' }) },
    { kind: 'type', column: 'tel', type: '{"column":"kind"}' },
    { kind: 'target', column: 'site', target: target({ to: 'website' }) },
    { kind: 'service', column: 'site', service: '"LINKED_IN"' },
    { kind: 'target', column: 'company id', target: target({ to: 'organisation', ref: 'companies' }) },
    { kind: 'target', column: 'company', target: target({ to: 'organisation' }) },
  ] satisfies MapEdit[]) {
    yaml = applyEdit(yaml, edit);
  }
  yaml = `${yaml}  - to: about\n    value: "{{first}} wrote {{note}}"\n  - to: tags\n    value: imported\n`;
  const raw = parse(yaml);
  const table = tableOf(raw, header, new Map());
  const line = (column: string) => table.columns.find((c) => c.name === column)?.entries ?? [];

  it('gives each column its role, target, type, service and words', () => {
    expect(line('first').map((e) => [e.role, e.choice, e.transform, e.before])).toEqual([
      ['value', target({ to: 'firstName' }), 'lowercase', ['trim']],
      ['other', '', '', []],
    ]);
    expect(line('first')[1]?.summary).toBe('about, from a template or a condition');
    expect(line('joined')[0]).toMatchObject({
      role: 'value',
      choice: target({ to: 'custom', definition: 'Joined', tag: null }),
      summary: 'custom field Joined',
    });
    expect(line('city')[0]).toMatchObject({
      role: 'part',
      choice: target({ to: 'address', part: 'city' }),
      type: '"Work"',
      summary: 'address (Work), city part',
    });
    expect(line('city')[0]?.shared).toBe(
      "One address entry with street: its type, Required and A bad value are the whole entry's.",
    );
    expect(line('tel')[0]).toMatchObject({ role: 'value', choice: target({ to: 'phone' }), type: '{"column":"kind"}' });
    expect(line('tel')[0]?.types?.map((t) => t.label)).toEqual(
      expect.arrayContaining(['(no type)', 'Mobile', 'read from column kind']),
    );
    expect(line('kind').map((e) => [e.role, e.summary])).toEqual([['other', 'phone: its type']]);
    expect(line('site')[0]).toMatchObject({ service: '"LINKED_IN"' });
    expect(line('site')[0]?.services?.[0]).toEqual({ value: '', label: 'URL (the default)' });
    expect(line('company id')[0]).toMatchObject({
      role: 'key',
      choice: target({ to: 'organisation', ref: 'companies' }),
      types: null,
      summary: 'organisation: link to a row of step companies, by its key',
    });
    expect(line('company id')[0]?.shared).toBe(
      "One organisation entry with company: its Required is the whole entry's.",
    );
    expect(line('company')[0]).toMatchObject({
      role: 'value',
      choice: target({ to: 'organisation' }),
      summary: 'organisation by name, when the link to step companies finds no row',
    });
    expect(line('email')).toEqual([]);
    expect(table.otherEntries).toEqual([{ index: expect.any(Number), summary: 'tags = imported' }]);
  });

  it("lists the targets in groups, with the account's custom fields, the links to each step and what the mapping names besides", () => {
    const choices = targetChoices(raw, header, {
      entity: 'party',
      customFields: [{ name: 'Contract end', tag: 'Customer' }],
      steps: ['companies', 'leads'],
    });
    const groups = new Map<string, string[]>();
    for (const c of choices) groups.set(c.group, [...(groups.get(c.group) ?? []), c.label]);
    expect(groups.get('Fields')).toContain('organisation by name (or id)');
    expect(groups.get('Items')).toEqual(['phone number', 'e-mail address', 'website']);
    expect(groups.get('Address parts')).toEqual([
      'address: street',
      'address: city',
      'address: state',
      'address: zip',
      'address: country',
    ]);
    expect(groups.get('Tags')).toEqual(['tags (a list: split it)']);
    expect(groups.get('Custom fields')).toEqual(['custom field: Contract end (tag Customer)']);
    expect(groups.get('Links to other steps')).toEqual([
      'organisation: link to a row of step companies',
      'organisation: link to a row of step leads',
    ]);
    expect(groups.get('As the mapping has it')).toEqual(['custom field: Joined']);
    // Every choice the table shows is in the list, so the list shows it chosen.
    for (const column of table.columns)
      for (const entry of column.entries)
        if (entry.editable) expect(choices.map((c) => c.value)).toContain(entry.choice);
  });

  it('offers what records are found by, for the entity', () => {
    expect(matchChoices(raw).choices.map((c) => c.value)).toEqual([
      '',
      'email',
      'name',
      'email, name',
      'name, email',
      'custom:Joined',
    ]);
    expect(matchChoices(parse(applyEdit(yaml, { kind: 'match', match: 'custom:Joined' }))).chosen).toBe(
      'custom:Joined',
    );
    expect(matchChoices({ entity: 'task' }).choices).toEqual([]);
  });
});

describe('the first rows: every edit maps them again and marks the cells it is about', () => {
  const BASE = `version: 1
entity: party
key: "{{id}}"
fields:
  - to: firstName
    value: {column: first}
  - to: lastName
    value: {column: last}
`;
  const CATALOG: AccountCatalog = {
    users: [],
    teams: [],
    pipelines: [],
    milestones: [],
    activityTypes: [],
    taskCategories: [],
    fieldDefinitions: {
      parties: [{ id: 1, name: 'Customer since', tag: null, type: 'Date' }],
      kases: [],
      opportunities: [],
    },
    trackDefinitions: [],
  };
  let sample: Sample;
  let companies: Awaited<ReturnType<typeof readStepKeys>>;
  beforeAll(async () => {
    const input = join(dir, 'people.csv');
    writeFileSync(
      input,
      [
        'id,first,last,email,phone,phone type,city,company id,company,joined,tags,site',
        '1,Ann,Lee,ann@example.com,+44 20 7946 0000,Mobile,Oslo,c1,Acme,2024-01-31,a;b,ann.example',
        '2,Bo,Ek,bo@example,,,Bergen,c9,Nowhere Ltd,31.01.2024,,',
        '3,Cy,,cy@example.com,,,,,,,,',
        '1,Ann,Lee,ann@example.com,,,Bergen,c1,Acme,2024-01-31,,',
        '5,Di,Ro,ANN@example.com,,,,,,,,',
      ].join('\n'),
    );
    sample = await readSample(input, undefined);
    writeFileSync(join(dir, 'companies.csv'), 'cid,name\nc1,Acme\n');
    writeFileSync(
      join(dir, 'companies.yaml'),
      'version: 1\nentity: party\nkey: "{{cid}}"\nfields:\n  - to: name\n    value: {column: name}\n',
    );
    companies = await readStepKeys(join(dir, 'companies.yaml'), join(dir, 'companies.csv'), dir);
  });

  async function preview(
    yaml: string,
    resolver: NameResolver = offlineResolver,
    unchecked = new Map<string, string>(),
  ): Promise<PreviewRow[]> {
    const book = new ReferenceBook();
    for (const key of companies.valid) book.addValid('companies', key);
    return previewRows({
      mapping: parseMapping(yaml, 'm.yaml'),
      mappingFile: join(dir, 'm.yaml'),
      baseDir: dir,
      sample,
      resolver,
      step: 'people',
      book,
      unchecked,
    });
  }
  const row = (rows: PreviewRow[], n: number) => rows.find((r) => r.row === n) as PreviewRow;
  const marks = (rows: PreviewRow[], n: number, column: string) =>
    (row(rows, n).marks[column] ?? []).map((m) => `${m.kind}: ${m.text}`);

  const cases: Array<
    [string, MapEdit[], (rows: PreviewRow[]) => void, { resolver?: NameResolver; unchecked?: Map<string, string> }?]
  > = [
    [
      'a target that refuses a value: the row is rejected on its cell',
      [
        { kind: 'target', column: 'email', target: target({ to: 'email' }) },
        { kind: 'transform', column: 'email', transform: 'email', param: '' },
      ],
      (rows) => {
        expect(row(rows, 3).status).toBe('rejected');
        expect(marks(rows, 3, 'email').join()).toMatch(/^rejected: .*bo@example/);
        expect(marks(rows, 2, 'email')).toEqual([]);
        expect(row(rows, 2).record).toContain('emailAddresses ann@example.com (Work)');
      },
    ],
    [
      'a custom field the account lacks, by name',
      [{ kind: 'target', column: 'joined', target: target({ to: 'custom', definition: 'Joined', tag: null }) }],
      (rows) => {
        expect(marks(rows, 2, 'joined').join()).toBe(
          'rejected: Unknown custom field Joined without a data tag of parties',
        );
      },
      { resolver: createResolver(CATALOG) },
    ],
    [
      "the account's custom field: the same cells pass",
      [
        { kind: 'target', column: 'joined', target: target({ to: 'custom', definition: 'Customer since', tag: null }) },
        { kind: 'transform', column: 'joined', transform: 'date', param: '' },
      ],
      (rows) => {
        expect(marks(rows, 2, 'joined')).toEqual([]);
        expect(row(rows, 2).record).toContain('fields Customer since: 2024-01-31');
        expect(marks(rows, 3, 'joined').join()).toMatch(/^rejected: .*31\.01\.2024/);
      },
      { resolver: createResolver(CATALOG) },
    ],
    [
      "a transform's options",
      [
        { kind: 'target', column: 'joined', target: target({ to: 'custom', definition: 'Customer since', tag: null }) },
        { kind: 'transform', column: 'joined', transform: 'date', param: 'dd.MM.yyyy' },
      ],
      (rows) => {
        expect(marks(rows, 3, 'joined')).toEqual([]);
        expect(marks(rows, 2, 'joined').join()).toMatch(/^rejected: .*2024-01-31/);
      },
    ],
    [
      'required',
      [{ kind: 'required', column: 'last', required: true }],
      (rows) => {
        expect(row(rows, 4).status).toBe('rejected');
        expect(marks(rows, 4, 'last').join()).toBe('rejected: last is empty, and the mapping needs a value there');
      },
    ],
    [
      'what a bad value does: left out, with a warning',
      [
        { kind: 'target', column: 'email', target: target({ to: 'email' }) },
        { kind: 'transform', column: 'email', transform: 'email', param: '' },
        { kind: 'onInvalid', column: 'email', onInvalid: 'drop' },
      ],
      (rows) => {
        expect(row(rows, 3).status).toBe('ok');
        expect(marks(rows, 3, 'email').join()).toMatch(/^warning: .*bo@example/);
      },
    ],
    [
      "an item's type read from a column",
      [
        { kind: 'target', column: 'phone', target: target({ to: 'phone' }) },
        { kind: 'type', column: 'phone', type: '{"column":"phone type"}' },
      ],
      (rows) => {
        expect(row(rows, 2).record).toContain('phoneNumbers +44 20 7946 0000 (Mobile)');
      },
    ],
    [
      "a website's service",
      [
        { kind: 'target', column: 'site', target: target({ to: 'website' }) },
        { kind: 'service', column: 'site', service: '"LINKED_IN"' },
      ],
      (rows) => {
        expect(row(rows, 2).record).toContain('websites ann.example (LINKED_IN, Work)');
      },
    ],
    [
      'an address part',
      [{ kind: 'target', column: 'city', target: target({ to: 'address', part: 'city' }) }],
      (rows) => {
        expect(row(rows, 2).record).toContain('addresses Oslo (Work)');
      },
    ],
    [
      'tags from a list',
      [
        { kind: 'target', column: 'tags', target: target({ to: 'tags' }) },
        { kind: 'transform', column: 'tags', transform: 'split', param: ';' },
      ],
      (rows) => {
        expect(row(rows, 2).record).toContain('tags a, b');
      },
    ],
    [
      "a link to another step: a key it lacks is a warning on the key's cell",
      [{ kind: 'target', column: 'company id', target: target({ to: 'organisation', ref: 'companies' }) }],
      (rows) => {
        expect(marks(rows, 2, 'company id')).toEqual([]);
        expect(row(rows, 2).record).toContain("organisation: the row 'c1' of step companies");
        expect(marks(rows, 3, 'company id').join()).toBe(
          'warning: company id "c9": no row with this key in step companies; the record is written without organisation',
        );
        expect(row(rows, 3).status).toBe('ok');
      },
    ],
    [
      'a required link: a key it lacks rejects the row',
      [
        { kind: 'target', column: 'company id', target: target({ to: 'organisation', ref: 'companies' }) },
        { kind: 'required', column: 'company id', required: true },
      ],
      (rows) => {
        expect(row(rows, 3).status).toBe('rejected');
        expect(marks(rows, 3, 'company id').join()).toBe(
          'rejected: company id "c9": no row with this key in step companies',
        );
      },
    ],
    [
      'a link with a name: the name is written when the key finds no row',
      [
        { kind: 'target', column: 'company id', target: target({ to: 'organisation', ref: 'companies' }) },
        { kind: 'target', column: 'company', target: target({ to: 'organisation' }) },
      ],
      (rows) => {
        expect(marks(rows, 3, 'company id')).toEqual([]);
        expect(row(rows, 3).record).toContain('organisation Nowhere Ltd');
      },
    ],
    [
      'a link to a step the plan lacks: said, not checked',
      [{ kind: 'target', column: 'company id', target: target({ to: 'organisation', ref: 'leads' }) }],
      (rows) => {
        expect(marks(rows, 2, 'company id')).toEqual([
          'warning: link to step leads not checked: plan.yaml has no step leads',
        ]);
      },
      { unchecked: new Map([['leads', 'plan.yaml has no step leads']]) },
    ],
    [
      'rows with one key: the first kept, the later one left out',
      [
        { kind: 'target', column: 'city', target: target({ to: 'address', part: 'city' }) },
        { kind: 'onDuplicate', onDuplicate: 'first' },
      ],
      (rows) => {
        expect(row(rows, 5).status).toBe('skipped');
        expect(marks(rows, 5, 'id')).toEqual(["warning: the same record as the row with key '1': folded into it"]);
        expect(marks(rows, 2, 'id').join()).toBe(
          'warning: Row 5 has the same key and was left out (onDuplicate: first)',
        );
      },
    ],
    [
      'rows with one key merged: the later one folded, the first warned',
      [
        { kind: 'target', column: 'city', target: target({ to: 'address', part: 'city' }) },
        { kind: 'onDuplicate', onDuplicate: 'merge' },
      ],
      (rows) => {
        expect(row(rows, 5).status).toBe('skipped');
        expect(marks(rows, 5, 'id')).toEqual(["warning: the same record as the row with key '1': folded into it"]);
        expect(marks(rows, 2, 'id').join()).toMatch(/^warning: Row 5 has the same key and was merged in: /);
        expect(row(rows, 2).record).toContain('addresses Oslo (Work), Bergen (Work)');
      },
    ],
    [
      'records found by e-mail: two rows with one address are one record',
      [
        { kind: 'target', column: 'email', target: target({ to: 'email' }) },
        { kind: 'match', match: 'email' },
      ],
      (rows) => {
        expect(row(rows, 6).status).toBe('rejected');
        expect(marks(rows, 6, 'email').join()).toMatch(/^rejected: .*same email \(ann@example\.com\)/);
      },
    ],
  ];
  it.each(cases)('%s', async (_what, edits, check, options = {}) => {
    let yaml = BASE;
    for (const edit of edits) yaml = applyEdit(yaml, edit);
    const before = await preview(BASE, options.resolver, options.unchecked);
    const after = await preview(yaml, options.resolver, options.unchecked);
    check(after);
    // Each edit changed what the first rows show.
    expect(after).not.toEqual(before);
  });

  it('rejects the later of two rows with one key, as the run does by default', async () => {
    const rows = await preview(BASE);
    expect(rows.map((r) => r.status)).toEqual(['ok', 'ok', 'ok', 'rejected', 'ok']);
    expect(marks(rows, 5, 'id').join()).toBe(
      "rejected: Duplicate key '1': an earlier row of step people has the same key; keys must be unique within a step",
    );
  });

  it('places a sample column in the table with its samples', () => {
    const table = tableOf(parse(BASE), sample.header, samplesOf(sample));
    expect(table.columns.find((c) => c.name === 'city')?.samples).toEqual(['Oslo', 'Bergen']);
  });
});
