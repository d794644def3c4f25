import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import iconv from 'iconv-lite';
import { afterAll, describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../errors/index.ts';
import type { SourceWarning } from '../types.ts';
import { readV1Export } from './v1-export.ts';
import type { V1ReadOptions } from './v1-export.ts';
import { collect, failureOf, rowValues, scratchDir } from '../../../test/unit/sources/source-test-kit.ts';

const sample = (name: string): string => fileURLToPath(new URL(`../../../samples/v1/${name}`, import.meta.url));
const scratch = scratchDir();
afterAll(() => scratch.remove());

function read(file: string, options: V1ReadOptions = {}) {
  const warnings: SourceWarning[] = [];
  return collect(readV1Export(file, { ...options, onWarning: (warning) => warnings.push(warning) }), warnings);
}

function write(name: string, content: string | Buffer): string {
  const file = scratch.path(name);
  writeFileSync(file, content);
  return file;
}

describe('readV1Export on the samples', () => {
  it('flattens people and organisations from parties.xml', async () => {
    const { items, warnings } = await read(sample('parties.xml'));
    const [ada, alan, org] = rowValues(items);
    expect(warnings).toEqual([]);
    expect(items.map((item) => item.location.elementPath)).toEqual([
      '/parties/person[1]',
      '/parties/person[2]',
      '/parties/organisation[1]',
    ]);
    expect(items.map((item) => [item.row, item.location.row, item.location.line])).toEqual([
      [1, 1, 3],
      [2, 2, 122],
      [3, 3, 137],
    ]);
    expect(ada).toMatchObject({
      id: '101',
      type: 'person',
      title: 'Dr',
      firstName: 'Ada',
      organisationName: 'Analytical Engines & Co',
      about: 'Likes <b>engines</b> & poetry',
      pictureURL: null,
      'email.1.emailAddress': 'ada@example.com',
      'email.2.type': 'Home',
      'phone.2.phoneNumber': '0117 496 0000',
      'address.1.city': 'Bristol',
      'website.1.url': 'https://ada.example.com',
      'customField.Industry': 'Computing',
      'customField.Newsletter': 'true',
      'customField.Supplier.Rating': 'A',
      tags: 'VIP;Café owner',
      'history.count': 3,
    });
    expect(Object.keys(ada ?? {}).some((key) => key.startsWith('historyItem') || key.startsWith('contacts'))).toBe(
      false,
    );
    expect(alan).toMatchObject({ id: '102', jobTitle: null, tags: null, 'email.1.emailAddress': 'alan@example.com' });
    expect(org).toMatchObject({
      id: '201',
      type: 'organisation',
      name: 'Analytical Engines & Co',
      about: '',
      'customField.Industry': 'Manufacturing',
      tags: 'Customer',
    });
    expect(org).not.toHaveProperty('firstName');
  });

  it('reads parties.json to exactly the same values as parties.xml', async () => {
    const xml = rowValues((await read(sample('parties.xml'))).items);
    const json = await read(sample('parties.json'));
    expect(rowValues(json.items)).toEqual(xml);
    expect(json.items.map((item) => item.location.elementPath)).toEqual([
      '$.parties.person[0]',
      '$.parties.person[1]',
      '$.parties.organisation',
    ]);
  });

  it.each([
    [
      'opportunities.xml',
      2,
      {
        id: '301',
        value: '12000.00',
        milestone: 'Proposal',
        'customField.Source': 'Referral',
        tags: 'Renewal',
        actualCloseDate: null,
      },
    ],
    ['kases.xml', 2, { id: '401', status: 'OPEN', partyId: '201', tags: 'Onsite', closeDate: null }],
    [
      'tasks.xml',
      4,
      { id: '1001', opportunityId: '301', dueDate: '2012-03-01T00:00:00Z', dueDateTime: null, caseId: null },
    ],
    ['history.xml', 3, { id: '703', type: 'Note', note: 'Measured the room.\nNeeds a bigger door.', partyId: '201' }],
  ])('reads %s', async (name, count, first) => {
    const { items } = await read(sample(name));
    expect(items).toHaveLength(count);
    expect(rowValues(items)[0]).toEqual(expect.objectContaining(first));
  });

  it('reads records nested in other records when asked, with their parent', async () => {
    for (const name of ['parties.xml', 'parties.json']) {
      const { items, warnings } = await read(sample(name), { record: 'historyItem' });
      const values = rowValues(items);
      expect(values.map((row) => [row['id'], row['parent.type'], row['parent.id']])).toEqual([
        ['701', 'person', '101'],
        ['702', 'person', '101'],
        ['707', 'person', '101'],
      ]);
      expect(values[1]).toMatchObject({
        'attachment.1.filename': 'brochure.pdf',
        'attachment.1.contentType': 'application/pdf',
      });
      expect(items.map((item) => item.row)).toEqual([1, 2, 3]);
      expect(warnings.map((warning) => warning.message)).toEqual([
        expect.stringMatching(/^1 person record\(s\) skipped/),
        expect.stringMatching(/^1 organisation record\(s\) skipped/),
      ]);
    }
    const xml = await read(sample('parties.xml'), { record: 'historyItem' });
    expect(xml.items[1]?.location.elementPath).toBe('/parties/person[1]/history[1]/historyItem[2]');
  });

  it("gives a case's additional contacts (whole parties nested in it) as party.<n>.id", async () => {
    const { items } = await read(fileURLToPath(new URL('../../../samples/v1-migration/kases.xml', import.meta.url)));
    const [installation, claim] = rowValues(items);
    expect(installation).toMatchObject({
      'party.1.id': '102',
      'parties.count': 1,
      'track.1.description': 'Installation checklist',
    });
    expect(Object.keys(installation ?? {}).filter((key) => key.startsWith('party.'))).toEqual(['party.1.id']);
    expect(claim).not.toHaveProperty('party.1.id');
  });

  it('reads only the kind asked for and says how many others it skipped', async () => {
    const { items, warnings } = await read(sample('parties.xml'), { record: 'organisation' });
    expect(rowValues(items).map((row) => row['id'])).toEqual(['201']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(/^2 person record\(s\) skipped/);
  });
});

describe('readV1Export on XML edge cases', () => {
  it('takes the first list of a file holding several, and the others on request', async () => {
    const file = write(
      'export.xml',
      '<export><parties><organisation><id>1</id><name>A</name></organisation></parties>' +
        '<opportunities><opportunity><id>5</id><name>Deal</name></opportunity><opportunity><id>6</id></opportunity></opportunities></export>',
    );
    const first = await read(file);
    expect(rowValues(first.items).map((row) => row['id'])).toEqual(['1']);
    expect(first.warnings[0]?.message).toMatch(/^2 opportunity record\(s\) skipped/);
    const deals = await read(file, { record: 'opportunity' });
    expect(deals.items.map((item) => item.location.elementPath)).toEqual([
      '/export/opportunities[1]/opportunity[1]',
      '/export/opportunities[1]/opportunity[2]',
    ]);
  });

  it('reads a BOM, a DOCTYPE, CDATA and character references', async () => {
    const file = write(
      'bom.xml',
      '\ufeff<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE parties SYSTEM "parties.dtd">\n' +
        '<parties><person><id>1</id><firstName>Jos&#233; &amp; &#x1F600;</firstName><about><![CDATA[a < b && c]]></about><lastName/></person></parties>',
    );
    const { items } = await read(file);
    expect(rowValues(items)).toEqual([
      expect.objectContaining({ id: '1', firstName: 'José & 😀', about: 'a < b && c', lastName: '' }),
    ]);
    expect(items[0]?.location.line).toBe(3);
  });

  it('decodes UTF-16 with a BOM and a declared ISO-8859-1 file', async () => {
    const xml = '<parties><person><id>1</id><firstName>Zoë</firstName></person></parties>';
    const utf16 = write('utf16.xml', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(xml, 'utf16le')]));
    const latin = write('latin.xml', iconv.encode(`<?xml version="1.0" encoding="ISO-8859-1"?>${xml}`, 'latin1'));
    for (const file of [utf16, latin]) {
      expect(rowValues((await read(file)).items)[0]?.['firstName']).toBe('Zoë');
    }
  });

  it('keeps column order stable across chunk boundaries in a file of a few thousand records', async () => {
    const people = Array.from(
      { length: 3000 },
      (_, i) =>
        `<person><id>${i + 1}</id><firstName>Zoë ${'é'.repeat(i % 7)}</firstName><tags><tag><name>t${i}</name></tag></tags></person>`,
    );
    const file = write('many.xml', `<parties>${people.join('\n')}</parties>`);
    const { items } = await read(file);
    const values = rowValues(items);
    expect(values).toHaveLength(3000);
    expect(values[2999]).toMatchObject({ id: '3000', firstName: `Zoë ${'é'.repeat(2999 % 7)}`, tags: 't2999' });
    expect(items[2999]?.location).toMatchObject({ row: 3000, line: 3000, elementPath: '/parties/person[3000]' });
  });

  it('yields a too-large record as a row error in place and reads on', async () => {
    const file = write(
      'big.xml',
      `<parties><person><id>1</id><about>${'x'.repeat(500)}</about></person><person><id>2</id></person></parties>`,
    );
    const { items } = await read(file, { maxRecordChars: 100 });
    expect(items.map((item) => item.kind)).toEqual(['error', 'row']);
    const first = items[0];
    expect(first?.kind === 'error' && first.error.code).toBe('SOURCE_FIELD_TOO_LARGE');
    expect(first?.location).toMatchObject({ row: 1, elementPath: '/parties/person[1]' });
    expect(items[1]?.row).toBe(2);
    const stopped = await failureOf(readV1Export(file, { maxRecordChars: 100, onMalformed: 'stop' }));
    expect(stopped.error.code).toBe('SOURCE_FIELD_TOO_LARGE');
  });
});

describe('readV1Export on JSON shapes', () => {
  it.each([
    [
      'a bare array with types',
      '[{"type":"person","id":"1","firstName":"A"},{"type":"organisation","id":"2","name":"B"}]',
      ['person:1', 'organisation:2'],
      '$[1]',
    ],
    [
      'a parties array without types',
      '{"parties":[{"id":"1","firstName":"A"},{"id":"2","name":"B"}]}',
      ['person:1', 'organisation:2'],
      '$.parties[1]',
    ],
    ['a single wrapped record', '{"person":{"id":"7","lastName":"Z"}}', ['person:7'], '$.person'],
    [
      'numeric ids, kept digit for digit',
      '{"parties":{"person":[{"id":12345678901234567890,"firstName":"A"},{"id":2}]}}',
      ['person:12345678901234567890', 'person:2'],
      '$.parties.person[1]',
    ],
  ])('reads %s', async (_name, json, expected, lastPath) => {
    const { items } = await read(write('shape.json', json));
    expect(rowValues(items).map((row) => `${String(row['type'])}:${String(row['id'])}`)).toEqual(expected);
    expect(items.at(-1)?.location.elementPath).toBe(lastPath);
  });

  it.each([
    ['an unwrapped record', 'loose.json', '{"id":"1","firstName":"A"}'],
    ['an empty list', 'empty-list.xml', '<parties size="0"/>'],
  ])('warns that %s holds no records instead of saying nothing', async (_name, file, content) => {
    const { items, warnings } = await read(write(file, content));
    expect(items).toEqual([]);
    expect(warnings).toEqual([
      expect.objectContaining({ code: 'OTHER', message: expect.stringContaining('holds no v1 records') }),
    ]);
  });

  it('reads a JSON file that starts with a BOM', async () => {
    const { items } = await read(write('bom.json', '\ufeff{"kases":{"kase":{"id":"4","name":"Café"}}}'));
    expect(rowValues(items)).toEqual([expect.objectContaining({ id: '4', name: 'Café', status: null })]);
  });

  it('stops when the signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('user stop'));
    for (const name of ['parties.xml', 'parties.json']) {
      await expect(collect(readV1Export(sample(name), { signal: controller.signal }))).rejects.toThrow('user stop');
    }
  });

  it('reads opportunities answered as a plain list, with tags as strings and nested history as a list', async () => {
    const json =
      '{"opportunities":[{"id":"5","name":"Deal","value":1000.5,"tags":["A","B"],"history":[{"id":"1"},{"id":"2"}],"customFields":[{"label":"Won","boolean":true}]}]}';
    const { items } = await read(write('opps.json', json));
    expect(rowValues(items)).toEqual([
      expect.objectContaining({ id: '5', value: '1000.5', tags: 'A;B', 'history.count': 2, 'customField.Won': 'true' }),
    ]);
  });

  it('reports a bare record of unknown kind as a row error, or stops on it', async () => {
    const file = write('bare.json', '[{"id":"1","subject":"?"},{"type":"task","id":"2","description":"x"}]');
    const { items } = await read(file);
    expect(items.map((item) => item.kind)).toEqual(['error', 'row']);
    const first = items[0];
    expect(first?.kind === 'error' && first.error.code).toBe('SOURCE_MALFORMED_RECORD');
    expect(first?.location.elementPath).toBe('$[0]');
    expect(rowValues((await read(file, { record: 'historyItem' })).items)[0]).toMatchObject({ id: '1', subject: '?' });
  });

  it('yields a too-large JSON record as a row error and reads on', async () => {
    const file = write(
      'big.json',
      `{"parties":{"person":[{"id":"1","about":"${'x'.repeat(300)}"},{"id":"2","firstName":"B"}]}}`,
    );
    const { items } = await read(file, { maxRecordChars: 100 });
    expect(items.map((item) => item.kind)).toEqual(['error', 'row']);
    expect(items[0]?.location.elementPath).toBe('$.parties.person[0]');
    expect(rowValues([items[1]!])[0]).toMatchObject({ id: '2', firstName: 'B' });
  });

  it('streams a JSON file of a few thousand records across chunk boundaries', async () => {
    const people = Array.from({ length: 3000 }, (_, i) => ({
      id: String(i + 1),
      firstName: `Zoë ${'é'.repeat(i % 5)}`,
      contacts: { email: { emailAddress: `p${i}@example.com` } },
    }));
    const { items } = await read(write('many.json', JSON.stringify({ parties: { person: people } }, null, 1)));
    expect(items).toHaveLength(3000);
    expect(rowValues(items)[2999]).toMatchObject({
      id: '3000',
      firstName: `Zoë ${'é'.repeat(2999 % 5)}`,
      'email.1.emailAddress': 'p2999@example.com',
    });
  });
});

describe('readV1Export refuses bad files with the exact error', () => {
  const cases: Array<{
    name: string;
    file: string;
    content: string | Buffer;
    code: ErrorCode;
    message: RegExp;
    location: Record<string, unknown>;
    before: number;
  }> = [
    {
      name: 'an unclosed element',
      file: 'unclosed.xml',
      content: '<parties>\n<person><id>1</id></person>\n<person><id>2</person>\n</parties>',
      code: 'SOURCE_XML_MALFORMED',
      message: /not well-formed XML: unexpected close tag/,
      location: { line: 3, column: 23, elementPath: '/parties/person[2]' },
      before: 1,
    },
    {
      name: 'a truncated document',
      file: 'truncated.xml',
      content: '<parties><person><id>1</id></person><person><id>2',
      code: 'SOURCE_XML_MALFORMED',
      message: /unclosed tag/,
      location: { line: 1 },
      before: 1,
    },
    {
      name: 'an external entity (XXE)',
      file: 'xxe.xml',
      content:
        '<?xml version="1.0"?>\n<!DOCTYPE parties [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n<parties><person><id>&xxe;</id></person></parties>',
      code: 'SOURCE_XML_ENTITY',
      message: /undefined entity/,
      location: { line: 3, elementPath: '/parties/person[1]' },
      before: 0,
    },
    {
      name: 'a billion-laughs chain',
      file: 'laughs.xml',
      content:
        '<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">' +
        '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>\n<parties><person><about>&lol3;</about></person></parties>',
      code: 'SOURCE_XML_ENTITY',
      message: /undefined entity/,
      location: { line: 3, elementPath: '/parties/person[1]' },
      before: 0,
    },
    {
      name: 'an HTML entity in text',
      file: 'nbsp.xml',
      content: '<parties>\n<person><id>1</id></person>\n<person><firstName>A&nbsp;B</firstName></person></parties>',
      code: 'SOURCE_XML_ENTITY',
      message: /undefined entity/,
      location: { line: 3, elementPath: '/parties/person[2]' },
      before: 1,
    },
    {
      name: 'JSON with a missing comma',
      file: 'comma.json',
      content: '{"parties": {"person": [\n  {"id": "1"},\n  {"id": "2" "firstName": "B"}\n]}}',
      code: 'SOURCE_JSON_MALFORMED',
      message: /expected ",", "}" or "]"; found "\\""/,
      location: { line: 3, column: 14, elementPath: '$.parties.person[1]' },
      before: 1,
    },
    {
      name: 'truncated JSON',
      file: 'truncated.json',
      content: '{"parties": {"person": [{"id": "1"}, {"id": "2", "firstName": "B',
      code: 'SOURCE_JSON_MALFORMED',
      message: /ends before it is complete/,
      location: { line: 1, elementPath: '$.parties.person[1]' },
      before: 1,
    },
    {
      name: 'a CSV file',
      file: 'people.xml',
      content: 'id,name\n1,Ada\n',
      code: 'SOURCE_FORMAT_UNKNOWN',
      message: /neither XML nor JSON/,
      location: { row: 1 },
      before: 0,
    },
    {
      name: 'an empty file',
      file: 'empty.xml',
      content: '',
      code: 'SOURCE_FORMAT_UNKNOWN',
      message: /is empty/,
      location: {},
      before: 0,
    },
    {
      name: 'an encoding nobody knows',
      file: 'klingon.xml',
      content: '<?xml version="1.0" encoding="x-klingon"?><parties/>',
      code: 'SOURCE_ENCODING',
      message: /x-klingon/,
      location: {},
      before: 0,
    },
    {
      name: 'XML with a byte that is not UTF-8 (Latin-1 é)',
      file: 'latin1.xml',
      content: Buffer.concat([
        Buffer.from('<parties><person><id>1</id></person>\n<person><firstName>Ren'),
        Buffer.from([0xe9]),
        Buffer.from('</firstName></person></parties>'),
      ]),
      code: 'SOURCE_ENCODING',
      message: /^byte 59 is not valid UTF-8$/,
      location: {},
      before: 0,
    },
    {
      name: 'JSON with a byte that is not UTF-8',
      file: 'latin1.json',
      content: Buffer.concat([
        Buffer.from('{"parties": {"person": [{"id": "1", "firstName": "Ren'),
        Buffer.from([0xe9]),
        Buffer.from('"}]}}'),
      ]),
      code: 'SOURCE_ENCODING',
      message: new RegExp(
        `^byte ${'{"parties": {"person": [{"id": "1", "firstName": "Ren'.length} is not valid UTF-8$`,
      ),
      location: {},
      before: 0,
    },
    {
      name: 'JSON cut in the middle of a UTF-8 character',
      file: 'cut.json',
      content: Buffer.from([...Buffer.from('{"parties": {"person": [{"id": "1", "firstName": "Ren'), 0xc3]),
      code: 'SOURCE_ENCODING',
      message: /ends in the middle of a UTF-8 character/,
      location: {},
      before: 0,
    },
    {
      name: '500,000 nested JSON arrays',
      file: 'deep.json',
      content: '['.repeat(500_000),
      code: 'SOURCE_TOO_DEEP',
      message: /^the document nests deeper than 100 levels/,
      location: { line: 1, elementPath: `$${'[0]'.repeat(100)}` },
      before: 0,
    },
    {
      name: '300,000 nested XML elements',
      file: 'deep.xml',
      content: `<parties>${'<a>'.repeat(300_000)}${'</a>'.repeat(300_000)}</parties>`,
      code: 'SOURCE_TOO_DEEP',
      message: /^the document nests deeper than 100 levels/,
      location: { line: 1, elementPath: `/parties${'/a[1]'.repeat(100)}` },
      before: 0,
    },
  ];

  for (const testCase of cases) {
    it(`${testCase.name} -> ${testCase.code}`, async () => {
      const file = write(testCase.file, testCase.content);
      const { error, before } = await failureOf(readV1Export(file));
      expect(error.code).toBe(testCase.code);
      expect(error.message).toMatch(testCase.message);
      expect(error.location).toMatchObject({ file, ...testCase.location });
      expect(before).toHaveLength(testCase.before);
      expect(error.hint ?? '').not.toBe('');
    });
  }

  it.each([
    [
      'xml',
      `<parties><person><id>1</id><about>${'<p>'.repeat(300_000)}${'</p>'.repeat(300_000)}</about></person>\n<person><id>2</id></person></parties>`,
      '/parties/person[1]',
    ],
    [
      'json',
      `{"parties": {"person": [{"id": "1", "about": ${'['.repeat(500_000)}${']'.repeat(500_000)}},\n{"id": "2"}]}}`,
      '$.parties.person[0]',
    ],
  ])(
    'a %s record nested past the limit is a row error (SOURCE_TOO_DEEP), and the next record is read',
    async (format, content, elementPath) => {
      const { items } = await read(write(`deep-record.${format}`, content));
      expect(items.map((item) => item.kind)).toEqual(['error', 'row']);
      expect(items[0]).toMatchObject({ kind: 'error', error: { code: 'SOURCE_TOO_DEEP', location: { elementPath } } });
      expect(rowValues(items.slice(1))[0]).toMatchObject({ id: '2' });
    },
  );

  it('says SOURCE_NOT_FOUND for a missing file, SOURCE_UNREADABLE for a directory and CONFIG_INVALID for a bad option', async () => {
    expect((await failureOf(readV1Export(scratch.path('nope.xml')))).error.code).toBe('SOURCE_NOT_FOUND');
    expect((await failureOf(readV1Export(scratch.dir))).error.code).toBe('SOURCE_UNREADABLE');
    const bad = { record: 'people' } as unknown as V1ReadOptions;
    expect((await failureOf(readV1Export(sample('parties.xml'), bad))).error.code).toBe('CONFIG_INVALID');
  });
});
