import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FerryError } from '../errors/index.ts';
import { loadMapping, MappingErrors, parseMapping } from './load.ts';

const HEAD = 'version: 1\nentity: party\nkey: "{{id}}"\n';

/** The problems parseMapping reports for a file, as [line, yamlPath, message]. */
function problems(text: string): Array<[number | undefined, string | undefined, string]> {
  try {
    parseMapping(text, 'm.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(MappingErrors);
    const errors = (error as MappingErrors).errors;
    for (const e of errors) {
      expect(e.code).toBe('MAPPING_INVALID');
      expect(e.location?.file).toBe('m.yaml');
    }
    return errors.map((e) => [e.location?.line, e.location?.yamlPath, e.message]);
  }
  throw new Error('expected the mapping to be refused');
}

describe('parseMapping refuses broken files with the line, the YAML path and what was expected', () => {
  const cases: Array<{
    name: string;
    text: string;
    expected: Array<[number | undefined, string | undefined, string]>;
  }> = [
    {
      name: 'YAML syntax error',
      text: `${HEAD}fields:\n  - to: firstName\n    value: {column: a\n  - to: lastName\n`,
      expected: [
        [
          7,
          undefined,
          'YAML syntax error: Flow map in block collection must be sufficiently indented and end with a }',
        ],
      ],
    },
    {
      name: 'duplicate key',
      text: `${HEAD}fields:\n  - to: firstName\n    value: a\n    to: lastName\n`,
      expected: [[7, undefined, 'duplicate key `to`: each key may appear once in a map']],
    },
    {
      name: 'wrong version and unknown entity',
      text: 'version: 2\nentity: oportunity\nkey: id\nfields:\n  - {to: name, value: x}\n',
      expected: [
        [1, 'version', 'expected 1, found 2'],
        [
          2,
          'entity',
          'expected one of party, kase, opportunity, entry, task, found the text "oportunity", did you mean `opportunity`?',
        ],
      ],
    },
    {
      name: 'missing key and empty fields',
      text: 'version: 1\nentity: party\nfields: []\n',
      expected: [
        [1, 'key', '`key` is required'],
        [3, 'fields', 'expected a list of at least 1 item, found 0 items'],
      ],
    },
    {
      name: 'unknown top-level key',
      text: `${HEAD}timezone: UTC\nfields:\n  - {to: lastName, value: x}\n`,
      expected: [[4, 'timezone', 'unknown key `timezone`, did you mean `timeZone`?']],
    },
    {
      name: 'unknown key in a value, and problems elsewhere in the same file',
      text: `${HEAD}fields:\n  - to: firstNme\n    value: {colum: a}\n  - to: lastName\n    value: {column: b, transform: [dat]}\n`,
      expected: [
        [5, 'fields[0].to', 'unknown target `firstNme` for entity party, did you mean `firstName`?'],
        [6, 'fields[0].value.colum', 'unknown key `colum`, did you mean `column`?'],
        [8, 'fields[1].value.transform[0]', 'unknown transform `dat`, did you mean `date`?'],
      ],
    },
    {
      name: 'transform options',
      text: `${HEAD}fields:\n  - to: tags\n    value:\n      column: t\n      transform:\n        - trim\n        - {split: {separater: ';'}}\n`,
      expected: [
        [
          10,
          'fields[0].value.transform[1].split.separater',
          'transform `split`: unknown key `separater`, did you mean `separator`?',
        ],
      ],
    },
    {
      name: 'transform written with two keys',
      text: `${HEAD}fields:\n  - to: tags\n    value: {column: t, transform: [{split: ';', trim: null}]}\n`,
      expected: [
        [
          6,
          'fields[0].value.transform[0]',
          'a transform is written as its name or as an object with its name as the only key, found keys `split`, `trim`',
        ],
      ],
    },
    {
      name: 'a value with two sources, and one with none',
      text: `${HEAD}fields:\n  - to: firstName\n    value: {column: a, const: b}\n  - to: lastName\n    value: {transform: [trim]}\n`,
      expected: [
        [
          6,
          'fields[0].value',
          'a value takes exactly one of `column`, `const`, `template` or `coalesce`, found `column` and `const`',
        ],
        [8, 'fields[1].value', 'a value needs one of `column`, `const`, `template` or `coalesce`'],
      ],
    },
    {
      name: 'ref on a target that is not a link, and key without ref',
      text: `${HEAD}fields:\n  - to: firstName\n    ref: people\n    key: "{{id}}"\n  - to: organisation\n    key: "{{company}}"\n`,
      expected: [
        [
          6,
          'fields[0].ref',
          '`ref` and `key` link records, so they only go with organisation, party, kase, opportunity or additionalContact, not `firstName`',
        ],
        [9, 'fields[1].key', '`key` needs a `ref`: the name of the step that creates the linked record'],
      ],
    },
    {
      name: 'ref lists: empty, a step named twice, a step that is not text',
      text: `version: 1\nentity: task\nkey: "{{id}}"\nfields:\n  - {to: description, value: x}\n  - to: kase\n    ref: []\n    key: "{{k}}"\n  - to: party\n    ref:\n      - people\n      - organisations\n      - people\n    key: "{{p}}"\n  - to: opportunity\n    ref: [deals, {name: x}]\n    key: "{{d}}"\n`,
      expected: [
        [7, 'fields[1].ref', 'expected a list of at least 1 item, found 0 items'],
        [13, 'fields[2].ref[2]', 'step `people` is already named at ref[0]; name each step once'],
        [16, 'fields[3].ref[1]', 'expected text, found a map with `name`'],
      ],
    },
    {
      name: 'ref that is neither a step nor a list',
      text: `${HEAD}fields:\n  - {to: lastName, value: x}\n  - to: organisation\n    ref: 5\n    key: "{{o}}"\n`,
      expected: [[7, 'fields[1].ref', 'expected text or a list, found 5']],
    },
    {
      name: 'no value',
      text: `${HEAD}fields:\n  - to: lastName\n    required: true\n`,
      expected: [[5, 'fields[0]', '`lastName` needs a `value`']],
    },
    {
      name: 'custom field without definition and tag',
      text: `${HEAD}fields:\n  - to: custom\n    value: {column: x}\n`,
      expected: [
        [5, 'fields[0]', 'a custom field needs `definition`: the name of its custom field definition'],
        [5, 'fields[0]', 'a custom field needs `tag`: the name of its data tag, or null for a field outside data tags'],
      ],
    },
    {
      name: 'parts, type, service and tag where they do not belong',
      text: `${HEAD}fields:\n  - to: lastName\n    value: x\n    parts: {city: {column: c}}\n  - to: website\n    value: {column: w}\n    service: LINKEDIN\n  - to: firstName\n    value: y\n    type: Work\n    tag: null\n`,
      expected: [
        [7, 'fields[0].parts', '`parts` only go with an address, not `lastName`'],
        [
          10,
          'fields[1].service',
          'expected one of URL, FEED, SKYPE, TWITTER, LINKED_IN, FACEBOOK, XING, GOOGLE_PLUS, FLICKR, GITHUB, YOUTUBE, INSTAGRAM, PINTEREST, found "LINKEDIN", did you mean `LINKED_IN`?',
        ],
        [
          13,
          'fields[2].type',
          '`type` only goes with address, phone, email, website and attachment (its content type), not `firstName`',
        ],
        [14, 'fields[2].tag', '`tag` only goes with custom, not `firstName`'],
      ],
    },
    {
      name: 'malformed templates',
      text: 'version: 1\nentity: party\nkey: "{{id"\nfields:\n  - {to: lastName, value: "{{ }} x"}\n',
      expected: [
        [
          3,
          'key',
          'malformed template "{{id": the placeholder at character 1 is not closed with }}; write a literal {{ as \\{{',
        ],
        [
          5,
          'fields[0].value',
          'malformed template "{{ }} x": the placeholder at character 1 names no column; write a literal {{ as \\{{',
        ],
      ],
    },
    {
      name: 'a regular expression that does not compile, and a condition with an unknown key',
      text: `${HEAD}skip: {column: e, matches: "([a-z"}\nfields:\n  - to: lastName\n    value: {column: n, when: {column: x, equal: 1}}\n`,
      expected: [
        [4, 'skip.matches', 'the pattern is not a valid regular expression (missing closing ]: `[a-z`)'],
        [7, 'fields[0].value.when.equal', 'unknown key `equal`, did you mean `equals`?'],
      ],
    },
    {
      name: 'patterns that need backtracking (a lookaround, a backreference), which the linear-time engine cannot run',
      text: `${HEAD}skip: {column: e, matches: "a(?=b)"}\nfields:\n  - {to: lastName, value: {column: n, transform: [{replace: {pattern: "(a)\\\\1", regex: true}}]}}\n  - {to: jobTitle, value: {column: j, transform: [{extract: "(?<=x)(y)"}]}}\n`,
      expected: [
        [
          4,
          'skip.matches',
          'the pattern looks ahead ((?=...); lookarounds need backtracking, which crm-ferry does not run',
        ],
        [
          6,
          'fields[0].value.transform[0].replace.pattern',
          'transform `replace` option `pattern`: pattern "(a)\\\\1" refers back to a group (\\1); backreferences need backtracking, which crm-ferry does not run, found the text "(a)\\\\1"',
        ],
        [
          7,
          'fields[1].value.transform[0]',
          'transform `extract` option `pattern`: pattern "(?<=x)(y)" looks behind ((?<=...); lookarounds need backtracking, which crm-ferry does not run, found the text "(?<=x)(y)"',
        ],
      ],
    },
    {
      name: 'unknown YAML tags, which another tool would run or read a file for',
      text: `${HEAD}fields:\n  - {to: lastName, value: !!js/function "function () {}"}\n  - {to: firstName, value: !include /etc/passwd}\n`,
      expected: [
        [
          5,
          undefined,
          'unknown YAML tag !!js/function: crm-ferry reads plain YAML values only (no tag runs code or reads a file); remove the tag and write the value itself',
        ],
        [
          6,
          undefined,
          'unknown YAML tag !include: crm-ferry reads plain YAML values only (no tag runs code or reads a file); remove the tag and write the value itself',
        ],
      ],
    },
    {
      name: 'a condition of the wrong shape',
      text: `${HEAD}skip: {all: 3}\nfields:\n  - {to: lastName, value: x}\n`,
      expected: [[4, 'skip.all', 'expected a list, found 3']],
    },
    {
      name: 'a target written twice, and a bad time zone',
      text: `${HEAD}timeZone: Europe/Berlinn\nfields:\n  - {to: lastName, value: x}\n  - {to: lastName, value: y}\n`,
      expected: [
        [4, 'timeZone', 'unknown time zone "Europe/Berlinn"; expected an IANA name such as Europe/Berlin or UTC'],
        [
          7,
          'fields[1].to',
          '`lastName` is already written by fields[0]; only tags, custom, address, phone, email, website, tracks, attachment and additionalContact may repeat',
        ],
      ],
    },
    {
      name: 'a value of the wrong type',
      text: `${HEAD}fields:\n  - to: lastName\n    value: [a, b]\n`,
      expected: [[6, 'fields[0].value', 'expected text, a number, true or false, null or a map, found a list']],
    },
    {
      name: 'a target of another entity',
      text: 'version: 1\nentity: task\nkey: id\nfields:\n  - {to: description, value: x}\n  - {to: descripton, value: "x"}\n',
      expected: [[6, 'fields[1].to', 'unknown target `descripton` for entity task, did you mean `description`?']],
    },
    {
      name: 'match: a fallback list naming one criterion twice, within of another entity, e-mail for an opportunity',
      text: 'version: 1\nentity: opportunity\nkey: id\nfields:\n  - {to: name, value: x}\nmatch: {by: [email, name, name], within: organisation}\n',
      expected: [
        [6, 'match.by', 'each criterion once: a fallback list names different ones, found a list'],
        [
          6,
          'match.within',
          'a project or opportunity is matched within its party: `within: party`, found the text "organisation"',
        ],
        [
          6,
          'match.by',
          'only parties have e-mail addresses; match projects and opportunities by name or custom, found a list',
        ],
      ],
    },
    {
      name: 'match: custom in a fallback list without its definition',
      text: `${HEAD}fields:\n  - {to: lastName, value: x}\nmatch: {by: [custom, name]}\n`,
      expected: [[6, 'match.definition', "`by: custom` needs `definition`: the custom field's name, found nothing"]],
    },
  ];

  it.each(cases)('$name', ({ text, expected }) => {
    expect(problems(text)).toEqual(expected);
  });

  it('puts one problem in the error message with its location, several as a list', () => {
    try {
      parseMapping(`${HEAD}fields:\n  - {to: lastNme, value: x}\n`, 'one.yaml');
    } catch (error) {
      expect((error as FerryError).message).toBe('unknown target `lastNme` for entity party, did you mean `lastName`?');
      expect((error as FerryError).location).toEqual({ file: 'one.yaml', line: 5, yamlPath: 'fields[0].to' });
    }
    expect(() => parseMapping('version: 2\nentity: x\nkey: k\nfields: [{to: a, value: b}]\n', 'two.yaml')).toThrow(
      /^2 problems in the mapping:\n {2}line 1, version: expected 1/,
    );
  });
});

describe('parseMapping accepts valid files', () => {
  it('fills in the default time zone and keeps values as written', () => {
    const mapping = parseMapping(
      `${HEAD}fields:\n  - {to: lastName, value: {column: Name, transform: [trim, {truncate: 20}]}}\n  - {to: custom, definition: Size, tag: null, value: 3}\n`,
      'ok.yaml',
    );
    expect(mapping.timeZone).toBe('UTC');
    expect(mapping.fields[0]?.value).toEqual({ column: 'Name', transform: ['trim', { truncate: 20 }] });
    expect(mapping.fields[1]?.tag).toBeNull();
  });

  it('checks transform options given as a shorthand', () => {
    const found = problems(`${HEAD}fields:\n  - {to: phone, value: {column: p, transform: [{phone: XX}]}}\n`);
    expect(found).toHaveLength(1);
    expect(found[0]?.[1]).toBe('fields[0].value.transform[0]');
    expect(found[0]?.[2]).toMatch(/^transform `phone` option `defaultCountry`: /);
  });
});

describe('loadMapping', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-load-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a file and reports problems with its path', async () => {
    const file = join(dir, 'broken.yaml');
    writeFileSync(file, `${HEAD}fields:\n  - {to: emial, value: x}\n`);
    await expect(loadMapping(file)).rejects.toMatchObject({
      code: 'MAPPING_INVALID',
      location: { file, line: 5, yamlPath: 'fields[0].to' },
    });
  });

  it('says when the file cannot be read', async () => {
    await expect(loadMapping(join(dir, 'missing.yaml'))).rejects.toMatchObject({
      code: 'MAPPING_NOT_FOUND',
      message: 'the mapping file does not exist',
    });
  });
});
