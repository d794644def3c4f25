import { describe, expect, it } from 'vitest';
import { FerryError } from '../errors/index.ts';
import { itemsOfBatches, SOURCE_BATCHES } from '../sources/types.ts';
import type { CellValue, SourceItem, SourceRow } from '../sources/types.ts';
import { compileMapping } from './compile.ts';
import type { CompiledMapping } from './compile.ts';
import { parseMapping } from './load.ts';
import { mapRows } from './map-rows.ts';
import type { MappedRecord, RejectedRow } from './types.ts';

async function compile(entity: string, body: string, key = '"{{id}}"'): Promise<CompiledMapping> {
  const text = `version: 1\nentity: ${entity}\nkey: ${key}\n${body}`;
  return compileMapping(parseMapping(text, '/maps/m.yaml'), { file: '/maps/m.yaml' });
}

function row(values: Record<string, CellValue>, n = 1): SourceRow {
  return {
    kind: 'row',
    source: 'in.csv',
    row: n,
    values: { id: String(n), ...values },
    location: { file: '/data/in.csv', row: n + 1 },
  };
}

function record(compiled: CompiledMapping, values: Record<string, CellValue>): MappedRecord {
  const item = compiled.mapRow(row(values));
  if (item.kind !== 'record') throw new Error(`expected a record, got ${JSON.stringify(item)}`);
  return item;
}

function rejected(compiled: CompiledMapping, values: Record<string, CellValue>): RejectedRow {
  const item = compiled.mapRow(row(values));
  if (item.kind !== 'rejected') throw new Error(`expected a reject, got ${JSON.stringify(item)}`);
  return item;
}

describe('party targets', () => {
  it('builds a person with every target in the v2 create shapes', async () => {
    const compiled = await compile(
      'party',
      `fields:
  - {to: title, value: {column: t}}
  - {to: firstName, value: {column: f, transform: [trim]}}
  - {to: lastName, value: {column: l}}
  - {to: jobTitle, value: {column: j}}
  - {to: about, value: "Imported: {{ n }}"}
  - {to: organisation, value: {column: c}}
  - {to: owner, value: {column: o}}
  - {to: team, value: Sales}
  - to: address
    type: Office
    parts: {street: {column: s}, city: {column: city}, state: {column: st}, zip: {column: z}, country: {const: UK}}
  - {to: phone, type: Mobile, value: {column: p}}
  - {to: email, type: {column: et}, value: {column: e}}
  - {to: website, service: TWITTER, value: {column: w}}
  - {to: tags, value: {column: tags, transform: [{split: ";"}]}}
  - {to: tags, value: Customer}
  - {to: custom, definition: Since, tag: null, value: {column: since}}
  - {to: custom, definition: Member, tag: Club, value: {column: member, transform: [boolean]}}
`,
    );
    const mapped = record(compiled, {
      t: 'Dr',
      f: ' Ada ',
      l: 'Lovelace',
      j: 'Analyst',
      n: 'x1',
      c: 'Engines Ltd',
      o: 'ada@example.com',
      s: '1 Main St',
      city: 'London',
      st: '',
      z: 'N1',
      p: '+44 20 7946 0000',
      et: 'Home',
      e: 'ada@example.com',
      w: '@ada',
      tags: 'customer;vip; ;VIP',
      since: new Date(Date.UTC(2020, 4, 17)),
      member: 'yes',
    });
    expect(mapped.record).toEqual({
      type: 'person',
      title: 'Dr',
      firstName: 'Ada',
      lastName: 'Lovelace',
      jobTitle: 'Analyst',
      about: 'Imported: x1',
      organisation: { name: 'Engines Ltd' },
      owner: { id: null },
      team: { id: null },
      addresses: [{ type: 'Office', street: '1 Main St', city: 'London', zip: 'N1', country: 'UK' }],
      phoneNumbers: [{ type: 'Mobile', number: '+44 20 7946 0000' }],
      emailAddresses: [{ type: 'Home', address: 'ada@example.com' }],
      websites: [{ service: 'TWITTER', address: '@ada' }],
      tags: [{ name: 'customer' }, { name: 'vip' }],
      fields: [
        { definition: { name: 'Since', tag: null }, value: '2020-05-17' },
        { definition: { name: 'Member', tag: 'Club' }, value: true },
      ],
    });
    expect(mapped.record.tags).toHaveLength(2);
    expect(mapped.names).toEqual([
      { path: ['owner', 'id'], kind: 'user', name: 'ada@example.com', yamlPath: 'fields[6]', column: 'o' },
      { path: ['team', 'id'], kind: 'team', name: 'Sales', yamlPath: 'fields[7]' },
      {
        path: ['fields', 0, 'definition'],
        kind: 'fieldDefinition',
        name: 'Since',
        scope: { entity: 'parties', tag: null },
        yamlPath: 'fields[14]',
        onInvalid: 'reject',
        valueColumn: 'since',
      },
      {
        path: ['fields', 1, 'definition'],
        kind: 'fieldDefinition',
        name: 'Member',
        scope: { entity: 'parties', tag: 'Club' },
        yamlPath: 'fields[15]',
        onInvalid: 'reject',
        valueColumn: 'member',
      },
    ]);
    expect(mapped).toMatchObject({ kind: 'record', entity: 'party', key: '1', row: 1, refs: [], attachments: [] });
  });

  it('leaves empty values out: no empty email, phone, address or tag', async () => {
    const compiled = await compile(
      'party',
      `fields:
  - {to: lastName, value: {column: l}}
  - {to: email, value: {column: e}}
  - {to: phone, value: {column: p}}
  - {to: address, parts: {city: {column: city}}}
  - {to: tags, value: {column: tags}}
`,
    );
    expect(record(compiled, { l: 'Hopper', e: '', p: '  ', city: null, tags: '' }).record).toEqual({
      type: 'person',
      lastName: 'Hopper',
    });
  });

  it('links an organisation by id and by reference to another step', async () => {
    const byId = await compile('party', 'fields:\n  - {to: lastName, value: x}\n  - {to: organisation, value: 42}\n');
    expect(record(byId, {}).record.organisation).toEqual({ id: 42 });
    const byRef = await compile(
      'party',
      'fields:\n  - {to: lastName, value: x}\n  - {to: organisation, ref: companies, key: "{{Company ID}}"}\n',
    );
    const mapped = record(byRef, { 'Company ID': ' C-7 ' });
    expect(mapped.record.organisation).toEqual({ id: null });
    expect(mapped.refs).toEqual([
      { path: ['organisation', 'id'], steps: ['companies'], key: 'C-7', yamlPath: 'fields[1]', column: 'Company ID' },
    ]);
    expect(record(byRef, { 'Company ID': '' }).record).not.toHaveProperty('organisation');
  });

  it('links to a record of one of several steps, keeping the order the mapping lists them in', async () => {
    const compiled = await compile(
      'kase',
      'fields:\n  - {to: name, value: x}\n  - {to: party, ref: [people, organisations], key: "{{partyId}}"}\n',
    );
    const first = record(compiled, { partyId: '201' });
    expect(first.record.party).toEqual({ id: null });
    expect(first.refs).toEqual([
      {
        path: ['party', 'id'],
        steps: ['people', 'organisations'],
        key: '201',
        yamlPath: 'fields[1]',
        required: true,
        column: 'partyId',
      },
    ]);
    // The list is shared between records, so it must not be changeable through one of them.
    expect(Object.isFrozen(first.refs[0]?.steps)).toBe(true);
  });

  it('infers organisations from a mapping that writes name only, and reads type from a column', async () => {
    const org = await compile('party', 'fields:\n  - {to: name, value: {column: n}}\n');
    expect(record(org, { n: 'Acme' }).record).toEqual({ type: 'organisation', name: 'Acme' });
    const mixed = await compile(
      'party',
      'fields:\n  - {to: type, value: {column: kind}}\n  - {to: name, value: {column: n}}\n  - {to: lastName, value: {column: l}}\n',
    );
    expect(record(mixed, { kind: 'Organisation', n: 'Acme', l: '' }).record).toEqual({
      type: 'organisation',
      name: 'Acme',
    });
    expect(record(mixed, { kind: 'person', n: '', l: 'Lamarr' }).record).toEqual({
      type: 'person',
      lastName: 'Lamarr',
    });
    expect(rejected(mixed, { kind: 'company', n: 'Acme', l: '' })).toMatchObject({
      field: 'type',
      code: 'MAPPING_VALUE',
      message: '`type` must be person or organisation, found "company"; a `lookup` transform can translate other words',
    });
    expect(rejected(mixed, { kind: 'organisation', n: 'Acme', l: 'Lamarr' })).toMatchObject({
      field: 'lastName',
      message: 'an organisation has no lastName; leave it empty for organisations',
    });
  });

  it('rejects a person without names and an organisation without name', async () => {
    const person = await compile(
      'party',
      'fields:\n  - {to: firstName, value: {column: f}}\n  - {to: lastName, value: {column: l}}\n',
    );
    expect(rejected(person, { f: '', l: ' ' })).toMatchObject({
      field: 'lastName',
      code: 'MAPPING_VALUE',
      message: 'a person needs a `firstName` or a `lastName`',
      key: '1',
    });
    const org = await compile('party', 'fields:\n  - {to: name, value: {column: n}}\n');
    expect(rejected(org, { n: '' })).toMatchObject({ field: 'name', message: 'an organisation needs a `name`' });
  });
});

describe('project, opportunity, entry and task targets', () => {
  it('builds a project', async () => {
    const compiled = await compile(
      'kase',
      `fields:
  - {to: name, value: {column: n}}
  - {to: description, value: {column: d}}
  - {to: party, ref: people, key: "{{pid}}"}
  - {to: opportunity, value: {column: opp}}
  - {to: owner, value: grace}
  - {to: team, value: Ops}
  - {to: status, value: {column: s}}
  - {to: stage, value: Planning}
  - {to: startOn, value: {column: start}}
  - {to: expectedCloseOn, value: "2024-12-31"}
  - {to: closedOn, value: {column: closed}}
  - {to: tags, value: [project]}
  - {to: custom, definition: Budget, tag: null, value: {column: b}}
  - {to: tracks, value: {column: tr, transform: [{split: ","}]}}
`.replace('[project]', 'project'),
    );
    const mapped = record(compiled, {
      n: 'Roll-out',
      d: 'Phase 1',
      pid: 'P1',
      opp: '17',
      s: 'closed',
      start: '2024-02-29',
      closed: '',
      b: 1200,
      tr: 'Onboarding, Review',
    });
    expect(mapped.record).toEqual({
      name: 'Roll-out',
      description: 'Phase 1',
      party: { id: null },
      opportunity: { id: 17 },
      owner: { id: null },
      team: { id: null },
      status: 'CLOSED',
      stage: null,
      startOn: '2024-02-29',
      expectedCloseOn: '2024-12-31',
      tags: [{ name: 'project' }],
      fields: [{ definition: { name: 'Budget', tag: null }, value: '1200' }],
      tracks: [{ definition: null }, { definition: null }],
    });
    expect(mapped.refs).toEqual([
      { path: ['party', 'id'], steps: ['people'], key: 'P1', yamlPath: 'fields[2]', required: true, column: 'pid' },
    ]);
    expect(mapped.names.map((n) => [n.path, n.kind, n.name])).toEqual([
      [['owner', 'id'], 'user', 'grace'],
      [['team', 'id'], 'team', 'Ops'],
      [['stage'], 'stage', 'Planning'],
      [['fields', 0, 'definition'], 'fieldDefinition', 'Budget'],
      [['tracks', 0, 'definition'], 'trackDefinition', 'Onboarding'],
      [['tracks', 1, 'definition'], 'trackDefinition', 'Review'],
    ]);
    expect(mapped.names[3]?.scope).toEqual({ entity: 'kases', tag: null });
    expect(rejected(compiled, { n: 'X', pid: 'P1', s: 'done' })).toMatchObject({
      field: 'status',
      message: '`status` must be one of OPEN, CLOSED, found "done"',
    });
    expect(rejected(compiled, { n: '', pid: 'P1' })).toMatchObject({
      field: 'name',
      message: 'a project needs a `name`',
    });
    expect(rejected(compiled, { n: 'X', pid: '' })).toMatchObject({
      field: 'party',
      message: 'a project needs a `party`',
    });
    expect(rejected(compiled, { n: 'X', pid: 'P', opp: 'big one' })).toMatchObject({
      field: 'opportunity',
      message: '`opportunity` takes an id (a whole number) or `ref` + `key`, found "big one"',
    });
  });

  it('builds an opportunity with its value and a milestone looked up in its pipeline', async () => {
    const compiled = await compile(
      'opportunity',
      `fields:
  - {to: name, value: {column: n}}
  - {to: description, value: Imported}
  - {to: party, value: {column: pid}}
  - {to: owner, value: grace}
  - {to: team, value: Ops}
  - {to: milestone, value: {column: m}}
  - {to: pipeline, value: {column: p}}
  - {to: amount, value: {column: a}}
  - {to: currency, value: {column: c}}
  - {to: probability, value: {column: pr}}
  - {to: durationBasis, value: month}
  - {to: duration, value: 6}
  - {to: expectedCloseOn, value: {column: e}}
  - {to: closedOn, value: {column: cl}}
  - {to: lostReason, value: {column: lr}}
  - {to: tags, value: deal}
  - {to: custom, definition: Source, tag: Leads, value: Fair}
  - {to: tracks, value: Follow-up}
`,
    );
    const mapped = record(compiled, {
      n: 'Licences',
      pid: 5,
      m: 'Won',
      p: 'Sales',
      a: '12500.50',
      c: 'eur',
      pr: 100,
      e: '2024-06-30',
      cl: '2024-06-01',
      lr: '',
    });
    expect(mapped.record).toEqual({
      name: 'Licences',
      description: 'Imported',
      party: { id: 5 },
      owner: { id: null },
      team: { id: null },
      milestone: { id: null },
      probability: 100,
      durationBasis: 'MONTH',
      duration: 6,
      expectedCloseOn: '2024-06-30',
      closedOn: '2024-06-01',
      tags: [{ name: 'deal' }],
      fields: [{ definition: { name: 'Source', tag: 'Leads' }, value: 'Fair' }],
      tracks: [{ definition: null }],
      value: { amount: 12500.5, currency: 'EUR' },
    });
    expect(mapped.names.find((n) => n.kind === 'milestone')).toEqual({
      path: ['milestone', 'id'],
      kind: 'milestone',
      name: 'Won',
      scope: { pipeline: 'Sales' },
      yamlPath: 'fields[5]',
      column: 'm',
    });
    expect(mapped.names.find((n) => n.kind === 'fieldDefinition')?.scope).toEqual({
      entity: 'opportunities',
      tag: 'Leads',
    });
    expect(
      record(compiled, {
        n: 'L',
        pid: 5,
        m: 'Won',
        p: '',
        a: '',
        c: '',
        pr: '',
        e: '',
        cl: '',
        lr: 'Price',
      }).names.find((n) => n.kind === 'milestone')?.scope,
    ).toEqual({ pipeline: null });
    expect(rejected(compiled, { n: 'L', pid: 5, m: 'Won', a: '10', c: '' })).toMatchObject({
      field: 'currency',
      message: 'an `amount` needs a `currency`',
    });
    expect(rejected(compiled, { n: 'L', pid: 5, m: 'Won', pr: '150' })).toMatchObject({
      field: 'probability',
      message: '`probability` must be a whole number from 0 to 100, found "150"',
    });
    expect(rejected(compiled, { n: 'L', pid: 5, m: 'Won', a: '1.234,56', c: 'EUR' })).toMatchObject({
      field: 'amount',
      message: expect.stringContaining('add a `number` transform'),
    });
    expect(rejected(compiled, { n: 'L', pid: 5, m: '' })).toMatchObject({
      field: 'milestone',
      message: 'an opportunity needs a `milestone`',
    });
    expect(rejected(compiled, { n: '', pid: 5, m: 'Won' })).toMatchObject({
      field: 'name',
      message: 'an opportunity needs a `name`',
    });
  });

  it('builds a note on exactly one record, with attachments resolved against the input folder', async () => {
    const compiled = await compile(
      'entry',
      `fields:
  - {to: party, ref: people, key: "{{pid}}"}
  - {to: kase, value: {column: kid}}
  - {to: content, value: {column: text}}
  - {to: activityType, value: {column: at}}
  - {to: entryAt, value: {column: when}}
  - {to: attachment, value: {column: file, transform: [{split: ";"}]}}
  - {to: attachment, value: {column: other}, type: {column: otherType}}
`,
    );
    const mapped = record(compiled, {
      pid: 'P1',
      kid: '',
      text: 'Called',
      at: 'Call',
      when: '2024-03-01T14:30:00+01:00',
      file: 'docs/a.pdf;/abs/b.txt',
    });
    expect(mapped.record).toEqual({
      type: 'note',
      party: { id: null },
      content: 'Called',
      activityType: null,
      entryAt: '2024-03-01T13:30:00Z',
    });
    expect(mapped.names).toEqual([
      { path: ['activityType'], kind: 'activityType', name: 'Call', yamlPath: 'fields[3]', column: 'at' },
    ]);
    expect(mapped.attachments).toEqual([
      { path: '/data/docs/a.pdf', contentType: null },
      { path: '/abs/b.txt', contentType: null },
    ]);
    // The content type a source names (a v1 export lists it beside the file name) goes with its file.
    const typed = record(compiled, {
      pid: 'P1',
      kid: '',
      text: 'x',
      at: 'Call',
      when: '',
      file: '',
      other: 'scan.bin',
      otherType: ' image/png ',
    });
    expect(typed.attachments).toEqual([{ path: '/data/scan.bin', contentType: 'image/png' }]);
    // Every numbered file of a record (a v1 history item's attachment.1.*, attachment.2.*, ...),
    // a `*` in a template placeholder standing for the number as in a column.
    const numbered = await compile(
      'entry',
      `fields:
  - {to: party, value: {column: pid}}
  - {to: content, value: {column: text}}
  - {to: attachment, items: numbered, value: "files/{{attachment.*.id}}/{{attachment.*.filename}}", type: {column: attachment.*.contentType}}
`,
    );
    const three = record(numbered, {
      pid: 5,
      text: 'x',
      'attachment.1.id': '801',
      'attachment.1.filename': 'a.pdf',
      'attachment.1.contentType': 'application/pdf',
      'attachment.2.id': '802',
      'attachment.2.filename': 'b',
      'attachment.3.id': '803',
      'attachment.3.filename': 'c.png',
      'attachment.3.contentType': 'image/png',
    });
    expect(three.attachments).toEqual([
      { path: '/data/files/801/a.pdf', contentType: 'application/pdf' },
      { path: '/data/files/802/b', contentType: null },
      { path: '/data/files/803/c.png', contentType: 'image/png' },
    ]);
    expect(record(numbered, { pid: 5, text: 'x' }).attachments).toEqual([]);
    expect(record(compiled, { pid: 'P1', kid: '', text: '', at: -2, when: '', file: 'x.pdf' }).record).toEqual({
      type: 'note',
      party: { id: null },
      activityType: -2,
    });
    expect(rejected(compiled, { pid: 'P1', kid: '3', text: 'x' })).toMatchObject({
      field: 'party',
      message: 'a note goes on exactly one record, found party and kase',
    });
    expect(rejected(compiled, { pid: '', kid: '', text: 'x' })).toMatchObject({
      field: 'party',
      message: 'a note needs one of `party`, `kase` or `opportunity`',
    });
    expect(rejected(compiled, { pid: 'P', kid: '', text: '', file: '' })).toMatchObject({
      field: 'content',
      message: 'a note needs `content` or an `attachment`',
    });
    expect(rejected(compiled, { pid: 'P', text: 'x', when: '01.03.2024' })).toMatchObject({
      field: 'entryAt',
      message: expect.stringContaining('add a `timestamp` transform'),
    });
  });

  it('links every numbered additional contact of a project, and applies every numbered track', async () => {
    const compiled = await compile(
      'kase',
      `fields:
  - {to: name, value: {column: name}}
  - {to: party, value: {column: pid}}
  - {to: additionalContact, items: numbered, ref: [people, organisations], key: "{{party.*.id}}"}
  - {to: tracks, items: numbered, value: {column: track.*.description}}
`,
    );
    const kase = record(compiled, {
      name: 'Rollout',
      pid: 7,
      'party.1.id': '102',
      'party.2.id': '201',
      'track.1.description': 'Onboarding',
      'track.2.description': 'Review',
    });
    expect(kase.record).toEqual({
      name: 'Rollout',
      party: { id: 7 },
      parties: [{ id: null }, { id: null }],
      tracks: [{ definition: null }, { definition: null }],
    });
    expect(kase.refs.map((r) => [r.path, r.steps, r.key])).toEqual([
      [['parties', 0, 'id'], ['people', 'organisations'], '102'],
      [['parties', 1, 'id'], ['people', 'organisations'], '201'],
    ]);
    expect(kase.names.map((n) => [n.path, n.name])).toEqual([
      [['tracks', 0, 'definition'], 'Onboarding'],
      [['tracks', 1, 'definition'], 'Review'],
    ]);
    expect(record(compiled, { name: 'Bare', pid: 7 }).record).toEqual({ name: 'Bare', party: { id: 7 } });
  });

  it('builds a task', async () => {
    const compiled = await compile(
      'task',
      `fields:
  - {to: description, value: {column: d}}
  - {to: detail, value: {column: x}}
  - {to: opportunity, ref: deals, key: "{{did}}"}
  - {to: owner, value: {column: o}}
  - {to: category, value: Call}
  - {to: dueOn, value: {column: due, transform: [{date: dd.MM.yyyy}]}}
  - {to: dueTime, value: {column: t}}
  - {to: status, value: {column: s}}
`,
    );
    const mapped = record(compiled, {
      d: 'Ring back',
      x: 'About the quote',
      did: 'D9',
      o: 'grace',
      due: '05.01.2025',
      t: '9:30',
      s: 'open',
    });
    expect(mapped.record).toEqual({
      description: 'Ring back',
      detail: 'About the quote',
      opportunity: { id: null },
      owner: { id: null },
      category: { id: null },
      dueOn: '2025-01-05',
      dueTime: '09:30:00',
      status: 'OPEN',
    });
    expect(mapped.names.map((n) => n.kind)).toEqual(['user', 'taskCategory']);
    expect(rejected(compiled, { d: 'x', due: '' })).toMatchObject({
      field: 'dueOn',
      message: 'a task needs a `dueOn` date',
    });
    expect(rejected(compiled, { d: '', due: '01.01.2025' })).toMatchObject({
      field: 'description',
      message: 'a task needs a `description`',
    });
    expect(rejected(compiled, { d: 'x', due: '01.01.2025', t: '25:00' })).toMatchObject({
      field: 'dueTime',
      message: '`dueTime` must be a time of day hh:mm or hh:mm:ss, found "25:00"',
    });
    const rejectedDate = rejected(compiled, { d: 'x', due: '31.02.2025' });
    expect(rejectedDate).toMatchObject({ field: 'dueOn', code: 'MAPPING_VALUE', key: '1' });
    expect(rejectedDate.message).toMatch(/^fields\[5\]\.value\.transform\[0\] \(`date`\): /);
    expect(rejectedDate.values).toMatchObject({ due: '31.02.2025' });
  });

  it('rejects a date that is not YYYY-MM-DD and names the fix', async () => {
    const compiled = await compile(
      'task',
      'fields:\n  - {to: description, value: x}\n  - {to: dueOn, value: {column: due}}\n',
    );
    expect(rejected(compiled, { due: '05/01/2025' })).toMatchObject({
      field: 'dueOn',
      message:
        '`dueOn` must be a date written YYYY-MM-DD, found "05/01/2025"; add a `date` transform with the source\'s format',
    });
    expect(rejected(compiled, { due: '2025-02-30' }).field).toBe('dueOn');
    expect(record(compiled, { due: new Date(Date.UTC(2025, 0, 5)) }).record.dueOn).toBe('2025-01-05');
  });

  it('rejects a task on two records', async () => {
    const compiled = await compile(
      'task',
      'fields:\n  - {to: description, value: x}\n  - {to: dueOn, value: "2025-01-01"}\n  - {to: party, value: 1}\n  - {to: kase, value: 2}\n',
    );
    expect(rejected(compiled, {})).toMatchObject({
      field: 'kase',
      message: 'a task goes on at most one record, found party and kase',
    });
  });
});

describe('values', () => {
  it('renders templates with spaces in placeholders and escaped braces', async () => {
    const compiled = await compile(
      'party',
      'fields:\n  - {to: lastName, value: "{{ Last Name }}, {{First}} \\\\{{literal}} {{n}}"}\n',
    );
    expect(record(compiled, { 'Last Name': 'Curie', First: 'Marie', n: 3 }).record.lastName).toBe(
      'Curie, Marie {{literal}} 3',
    );
    expect(compiled.columns).toEqual(['id', 'Last Name', 'First', 'n']);
  });

  it('takes the first non-empty value of a coalesce, and applies the outer transforms to it', async () => {
    const compiled = await compile(
      'party',
      'fields:\n  - {to: lastName, value: {coalesce: [{column: a}, {column: b, transform: [trim]}, Unknown], transform: [uppercase]}}\n',
    );
    expect(record(compiled, { a: '', b: ' smith ' }).record.lastName).toBe('SMITH');
    expect(record(compiled, { a: '  ', b: '' }).record.lastName).toBe('UNKNOWN');
    expect(record(compiled, { a: 'jones', b: 'smith' }).record.lastName).toBe('JONES');
  });

  it('writes a value only when its condition holds', async () => {
    const compiled = await compile(
      'party',
      `fields:
  - {to: lastName, value: {column: l}}
  - {to: jobTitle, value: {column: j, when: {any: [{column: kind, equals: " Staff "}, {column: kind, in: [contractor, 7]}]}}}
  - {to: about, value: {column: a, when: {all: [{column: a, matches: "^VIP"}, {not: {column: blocked, empty: false}}]}}}
  - {to: title, value: {const: Dr, when: {column: phd}}}
`,
    );
    expect(
      record(compiled, { l: 'X', j: 'Dev', kind: 'staff', a: 'VIP client', blocked: '', phd: 'yes' }).record,
    ).toEqual({ type: 'person', lastName: 'X', jobTitle: 'Dev', about: 'VIP client', title: 'Dr' });
    expect(record(compiled, { l: 'X', j: 'Dev', kind: 7, a: 'VIP', blocked: 'x', phd: '' }).record).toEqual({
      type: 'person',
      lastName: 'X',
      jobTitle: 'Dev',
    });
    expect(record(compiled, { l: 'X', j: 'Dev', kind: 'guest', a: 'vip', blocked: '', phd: null }).record).toEqual({
      type: 'person',
      lastName: 'X',
    });
  });

  it('skips rows the skip condition selects, before the key is needed', async () => {
    const compiled = await compile(
      'party',
      'skip: {column: status, equals: deleted}\nfields:\n  - {to: lastName, value: {column: l}}\n',
    );
    expect(
      compiled.mapRow({ ...row({ status: 'Deleted', l: '' }), values: { id: '', status: 'Deleted', l: '' } }),
    ).toEqual({ kind: 'skipped', row: 1, location: { file: '/data/in.csv', row: 2 } });
    expect(compiled.mapRow(row({ status: 'active', l: 'Y' })).kind).toBe('record');
  });

  it('rejects a row whose required field is empty', async () => {
    const compiled = await compile(
      'party',
      'fields:\n  - {to: lastName, value: {column: l}}\n  - {to: email, value: {column: e}, required: true}\n',
    );
    expect(rejected(compiled, { l: 'Y', e: ' ' })).toMatchObject({
      field: 'email',
      code: 'MAPPING_VALUE',
      message: '`email` is required (fields[1]) but the row gives it no value',
    });
  });

  it('makes keys from a template, a column name or a list of columns, and rejects rows without one', async () => {
    const listKey = await compile('party', 'fields:\n  - {to: lastName, value: x}\n', '[a, b]');
    expect(record(listKey, { a: 'A', b: 2 }).key).toBe('A|2');
    expect(record(listKey, { a: '', b: 2 }).key).toBe('|2');
    expect(rejected(listKey, { a: '', b: null })).toMatchObject({
      key: null,
      field: 'key',
      code: 'MAPPING_VALUE',
      message: 'the row has no key: the key columns are empty',
    });
    const columnKey = await compile('party', 'fields:\n  - {to: lastName, value: x}\n', 'Contact ID');
    expect(record(columnKey, { 'Contact ID': ' 9 ' }).key).toBe('9');
    expect(columnKey.columns).toEqual(['Contact ID']);
  });
});

describe('checkColumns', () => {
  it('names every missing column with the closest header name', async () => {
    const compiled = await compile(
      'party',
      'fields:\n  - {to: firstName, value: {column: First Name}}\n  - {to: lastName, value: "{{Surname}}"}\n  - {to: email, value: {column: Email}}\n',
    );
    expect(() => compiled.checkColumns(['id', 'First Name', 'Surname', 'Email'])).not.toThrow();
    let error: unknown;
    try {
      compiled.checkColumns(['id', 'Firstname', 'Last', 'Email']);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(FerryError);
    expect(error).toMatchObject({
      code: 'MAPPING_INVALID',
      message: 'the input has no columns `First Name` (did you mean `Firstname`?), `Surname`, which the mapping reads',
      location: { file: '/maps/m.yaml' },
      hint: 'The input\'s 4 columns are: "id", "Firstname", "Last", "Email"',
    });
  });
});

describe('compileMapping', () => {
  it('builds lookup transforms once, reading their files relative to the mapping', async () => {
    const reads: string[] = [];
    const mapping = parseMapping(
      'version: 1\nentity: party\nkey: id\nfields:\n  - {to: lastName, value: {column: l, transform: [{lookup: {file: codes.csv}}]}}\n',
      '/maps/m.yaml',
    );
    const compiled = await compileMapping(mapping, {
      file: '/maps/m.yaml',
      readTextFile: async (path) => {
        reads.push(path);
        return 'key,value\nab,Abbott\n';
      },
    });
    expect(record(compiled, { l: 'AB' }).record.lastName).toBe('Abbott');
    expect(record(compiled, { l: 'ab' }).record.lastName).toBe('Abbott');
    expect(reads).toEqual(['/maps/codes.csv']);
  });
});

describe('mapRows', () => {
  it("maps rows in order and turns unreadable records into rejects with the reader's code and raw text", async () => {
    const compiled = await compile('party', 'fields:\n  - {to: lastName, value: {column: l}}\n');
    async function* items(): AsyncGenerator<SourceItem> {
      yield row({ l: 'A' }, 1);
      yield {
        kind: 'error',
        source: 'in.csv',
        row: 2,
        error: new FerryError('SOURCE_COLUMN_COUNT', 'expected 2 fields, found 3'),
        location: { file: '/data/in.csv', row: 3, line: 3 },
        raw: '2,B,extra',
      };
      yield row({ l: '' }, 3);
    }
    const out = [];
    for await (const item of mapRows(items(), compiled)) out.push(item);
    expect(out.map((i) => i.kind)).toEqual(['record', 'rejected', 'rejected']);
    expect(out[1]).toEqual({
      kind: 'rejected',
      row: 2,
      location: { file: '/data/in.csv', row: 3, line: 3 },
      key: null,
      field: '',
      code: 'SOURCE_COLUMN_COUNT',
      message: 'expected 2 fields, found 3',
      values: null,
      raw: '2,B,extra',
    });
    expect(out[2]).toMatchObject({ row: 3, key: '3', field: 'lastName' });
  });

  it('closes the source when the consumer stops early, and passes a reader failure on', async () => {
    const compiled = await compile('party', 'fields:\n  - {to: lastName, value: {column: l}}\n');
    let closed = false;
    async function* items(): AsyncGenerator<SourceItem> {
      try {
        for (let n = 1; n <= 5; n++) yield row({ l: `L${n}` }, n);
      } finally {
        closed = true;
      }
    }
    for await (const item of mapRows(items(), compiled)) if (item.row === 2) break;
    expect(closed).toBe(true);

    async function* broken(): AsyncGenerator<SourceItem> {
      yield row({ l: 'A' }, 1);
      throw new FerryError('SOURCE_UNREADABLE', 'the disk went away');
    }
    const seen: number[] = [];
    await expect(async () => {
      for await (const item of mapRows(broken(), compiled)) seen.push(item.row);
    }).rejects.toThrow('the disk went away');
    expect(seen).toEqual([1]);
  });
});

describe('mapRows over a source read in batches', () => {
  it('maps each batch at once, keeps the order, and never starts the per-item reading', async () => {
    const compiled = await compile('party', 'fields:\n  - {to: lastName, value: {column: l}}\n');
    let opened = 0;
    let closed = false;
    async function* batches(): AsyncGenerator<SourceItem[]> {
      opened += 1;
      try {
        yield [row({ l: 'A' }, 1), row({ l: '' }, 2)];
        yield [
          {
            kind: 'error',
            source: 'in.csv',
            row: 3,
            error: new FerryError('SOURCE_COLUMN_COUNT', 'expected 2 fields, found 3'),
            location: { file: '/data/in.csv', row: 4 },
          },
        ];
        yield [row({ l: 'D' }, 4), row({ l: 'E' }, 5)];
      } finally {
        closed = true;
      }
    }
    // A source whose items must not be read one by one: only its batches work.
    const source = {
      [Symbol.asyncIterator](): AsyncIterator<SourceItem> {
        throw new Error('read item by item');
      },
      [SOURCE_BATCHES]: batches,
    };
    const out = [];
    for await (const item of mapRows(source, compiled)) out.push(`${item.row}:${item.kind}`);
    expect(out).toEqual(['1:record', '2:rejected', '3:rejected', '4:record', '5:record']);
    expect(opened).toBe(1);

    closed = false;
    for await (const item of mapRows(itemsOfBatches(batches), compiled)) if (item.row === 2) break;
    expect(closed).toBe(true);
  });
});

describe('generated code', () => {
  it('reads columns and writes text whose names would break out of a string literal', async () => {
    // Every name and text of the mapping reaches the generated function as a string literal or a
    // constant; none of these may end it early or run as code.
    const hostile = [
      'a"b',
      "c'd",
      'e\\f',
      'g`${h}`',
      'i\nj',
      '*/ k /*',
      '"); throw new Error("boom"); ("',
      '\u2028line',
      'x\u00010\u0001y',
    ];
    const fields = hostile
      .map(
        (name, i) =>
          `  - {to: custom, definition: ${JSON.stringify(`D${i}`)}, tag: null, value: {column: ${JSON.stringify(name)}}}`,
      )
      .join('\n');
    const compiled = await compile(
      'party',
      `fields:\n  - {to: lastName, value: ${JSON.stringify('{{a"b}} & {{*/ k /*}}')}}\n${fields}\n`,
    );
    expect(compiled.columns).toEqual(expect.arrayContaining(hostile));
    const values = Object.fromEntries(hostile.map((name, i) => [name, `value ${i}`]));
    const mapped = record(compiled, values);
    expect(mapped.record.lastName).toBe('value 0 & value 5');
    expect((mapped.record.fields as Array<{ value: string }>).map((f) => f.value)).toEqual(
      hostile.map((_, i) => `value ${i}`),
    );
  });

  it('runs the transforms of a constant once, and rejects every row when they refuse it', async () => {
    let calls = 0;
    const { TRANSFORMS } = await import('./transforms/index.ts');
    const counting = {
      ...TRANSFORMS,
      upper: {
        ...TRANSFORMS.uppercase,
        name: 'upper',
        create: () => (value: unknown) => (calls++, String(value).toUpperCase()),
      },
    } as typeof TRANSFORMS;
    const text =
      'version: 1\nentity: party\nkey: id\nfields:\n  - {to: lastName, value: {const: smith, transform: [upper]}}\n  - {to: jobTitle, value: {const: abc, transform: [email]}}\n';
    const compiled = await compileMapping(parseMapping(text, '/maps/m.yaml', { transforms: counting }), {
      file: '/maps/m.yaml',
      transforms: counting,
    });
    for (let n = 1; n <= 3; n++)
      expect(compiled.mapRow(row({}, n))).toMatchObject({
        kind: 'rejected',
        field: 'jobTitle',
        message: expect.stringContaining('fields[1].value.transform[0] (`email`)'),
      });
    expect(calls).toBe(1);
  });

  it('reads a row-dependent phone type only for a value that is written', async () => {
    const compiled = await compile(
      'party',
      'fields:\n  - {to: lastName, value: x}\n  - {to: phone, type: {column: k, transform: [{lookup: {table: {m: Mobile}}}]}, value: {column: p}}\n',
    );
    // An unknown type with no number: nothing to write, so the type is not looked up.
    expect(record(compiled, { p: '', k: 'zz' }).record.phoneNumbers).toBeUndefined();
    expect(rejected(compiled, { p: '+44 20 7946 0000', k: 'zz' }).field).toBe('phone');
    expect(record(compiled, { p: '+44 20 7946 0000', k: 'M' }).record.phoneNumbers).toEqual([
      { type: 'Mobile', number: '+44 20 7946 0000' },
    ]);
  });

  it('builds an address from the parts a row has, with a fixed or a row-dependent type', async () => {
    const compiled = await compile(
      'party',
      'fields:\n  - {to: lastName, value: x}\n  - to: address\n    type: Office\n    parts: {street: {column: s}, city: {column: c}}\n  - to: address\n    type: {column: k}\n    parts: {city: {column: c2}}\n',
    );
    expect(record(compiled, { s: '', c: 'Oslo', k: '', c2: 'Bergen' }).record.addresses).toEqual([
      { type: 'Office', city: 'Oslo' },
      { city: 'Bergen' },
    ]);
    expect(record(compiled, { s: '1 Main', c: 'Oslo', k: 'Home', c2: 'Bergen' }).record.addresses).toEqual([
      { type: 'Office', street: '1 Main', city: 'Oslo' },
      { type: 'Home', city: 'Bergen' },
    ]);
    expect(record(compiled, { s: ' ', c: '', k: 'Home', c2: '' }).record.addresses).toBeUndefined();
  });

  it('compares `in` lists without case or surrounding blanks, whatever the length of the cell', async () => {
    const compiled = await compile(
      'party',
      'fields:\n  - {to: lastName, value: x}\n  - {to: title, value: {column: t, when: {column: t, in: [Dr, Prof]}}}\n',
    );
    for (const yes of ['Dr', ' dr ', 'PROF', '\tprof        ', 'Prof\u00a0'])
      expect(record(compiled, { t: yes }).record.title).toBe(yes);
    for (const no of ['Doctor', 'Drs', 'D', 'Professor', ' Dr. ', ''])
      expect(record(compiled, { t: no }).record.title).toBeUndefined();
  });

  it('reads rows given as fields by their position in the header, a column the header lacks as empty', async () => {
    const compiled = await compile(
      'party',
      'fields:\n  - {to: lastName, value: {column: l}}\n  - {to: jobTitle, value: {column: j}}\n  - {to: about, value: "{{a\\"b}}!"}\n',
    );
    const header = ['a"b', 'id', 'l'];
    const item = compiled.mapFields({
      kind: 'fields',
      source: 'in.csv',
      row: 1,
      fields: ['quoted', '7', 'Smith'],
      header,
      location: { file: '/data/in.csv', row: 2 },
    });
    expect(item).toMatchObject({
      kind: 'record',
      key: '7',
      record: { type: 'person', lastName: 'Smith', about: 'quoted!' },
    });
    expect((item as MappedRecord).record.jobTitle).toBeUndefined();
    const reject = compiled.mapFields({
      kind: 'fields',
      source: 'in.csv',
      row: 2,
      fields: ['', '8', ''],
      header,
      location: { file: '/data/in.csv', row: 3 },
    });
    expect(reject).toMatchObject({
      kind: 'rejected',
      key: '8',
      field: 'lastName',
      values: { 'a"b': '', id: '8', l: '' },
    });
  });

  it('keeps its source for reading, naming each field', async () => {
    const compiled = await compile(
      'party',
      'fields:\n  - {to: lastName, value: {column: l}}\n  - {to: tags, value: VIP}\n',
    );
    expect(compiled.source).toContain('// fields[0]: lastName');
    expect(compiled.source).toContain('values["l"]');
  });
});

describe('transform chains name the step that failed', () => {
  // Chains of one, two and three steps are run by dedicated code, longer ones by a loop: each
  // must name the failing step's place, and steps after a failure must not have run.
  it.each([
    ['[email]', 0],
    ['[trim, email]', 1],
    ['[email, trim]', 0],
    ['[trim, lowercase, email]', 2],
    ['[trim, email, lowercase]', 1],
    ['[trim, collapse, lowercase, email]', 3],
    ['[trim, collapse, email, lowercase, uppercase]', 2],
  ])('%s fails at step %i', async (chain, step) => {
    const compiled = await compile(
      'party',
      `fields:\n  - {to: lastName, value: x}\n  - {to: email, value: {column: e, transform: ${chain}}}\n`,
    );
    const reject = rejected(compiled, { e: 'not an address' });
    expect(reject.field).toBe('email');
    expect(reject.message).toMatch(
      new RegExp(`^fields\\[1\\]\\.value\\.transform\\[${step}\\] \\(\`email\`\\): expected an email address`),
    );
  });

  it.each(['[trim, lowercase, email]', '[trim, collapse, lowercase, email]'])(
    '%s gives every step its turn on a good value',
    async (chain) => {
      const compiled = await compile(
        'party',
        `fields:\n  - {to: lastName, value: x}\n  - {to: email, value: {column: e, transform: ${chain}}}\n`,
      );
      expect(record(compiled, { e: '  Ada@Example.COM ' }).record.emailAddresses).toEqual([
        { address: 'ada@example.com' },
      ]);
    },
  );
});
