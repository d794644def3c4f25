import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/fake-io.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-validate-'));
let sandbox: TestSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox();
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

function run(args: string[], cwd = ROOT): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(['validate', ...args], { cwd });
}

/** A clean folder under the test's temporary folder. */
function freshDir(name: string): string {
  const path = join(dir, name);
  rmSync(path, { recursive: true, force: true });
  mkdirSync(path, { recursive: true });
  return path;
}

const PEOPLE_MAPPING = `version: 1
entity: party
key: "{{id}}"
fields:
  - to: firstName
    value: { column: first }
  - to: lastName
    value: { column: last }
  - to: owner
    value: { column: owner }
`;

const PEOPLE_CSV = [
  'id,first,last,owner',
  'P-1,Ada,Lovelace,sam',
  'P-2,,,sam',
  'P-1,Dup,Key,kim',
  'P-3,Bob,"Smith, ""Jr.""",samm',
  '',
].join('\n');

describe('crm-ferry validate --mapping', () => {
  it('exit 3: writes the rejects (BOM, quoting, CRLF) beside the input and prints the summary', async () => {
    const base = freshDir('single');
    writeFileSync(join(base, 'people.yaml'), PEOPLE_MAPPING);
    writeFileSync(join(base, 'people.csv'), PEOPLE_CSV);
    const { code, stdout, stderr } = await run(['--mapping', 'people.yaml', '--input', 'people.csv'], base);
    expect(stderr).toBe('');
    expect(code).toBe(3);
    expect(stdout).toContain('Validated people.csv with people.yaml (offline: names not checked (use --online))');
    expect(stdout).toMatch(/rows read\s+4\n/);
    expect(stdout).toMatch(/ok\s+2\n/);
    expect(stdout).toMatch(/rejected\s+2  -> rejects\.csv\n/);
    expect(stdout).toContain(
      "MAPPING_VALUE: Duplicate key 'P-1': an earlier row of step people has the same key; keys must be unique within a step (first at row 4)",
    );
    expect(stdout).toContain('2 rows were rejected');
    const bytes = readFileSync(join(base, 'rejects.csv'));
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = bytes.subarray(3).toString('utf8');
    const lines = text.split('\r\n');
    expect(lines[0]).toBe('id,first,last,owner,_row,_field,_code,_message,_rule,_raw');
    expect(lines[1]).toMatch(/^P-2,,,sam,3,lastName,MAPPING_VALUE,/);
    expect(lines[2]).toBe(
      "P-1,Dup,Key,kim,4,key,MAPPING_VALUE,Duplicate key 'P-1': an earlier row of step people has the same key; keys must be unique within a step,key,",
    );
    expect(lines[3]).toBe('');
    expect(lines).toHaveLength(4);
  });

  it('exit 0 when every row is valid, and a rejects file of an earlier run is removed', async () => {
    const base = join(dir, 'single');
    writeFileSync(join(base, 'people.csv'), 'id,first,last,owner\nP-1,Ada,Lovelace,sam\n');
    expect(existsSync(join(base, 'rejects.csv'))).toBe(true);
    const { code, stdout } = await run(['--mapping', 'people.yaml', '--input', 'people.csv'], base);
    expect(code).toBe(0);
    expect(stdout).toContain('removed the rejects file of an earlier run');
    expect(stdout).toContain('All rows are valid.');
    expect(existsSync(join(base, 'rejects.csv'))).toBe(false);
  });

  it('validating a fixed rejects file again writes its rejects beside it, not over it', async () => {
    const base = join(dir, 'single');
    writeFileSync(join(base, 'people.csv'), PEOPLE_CSV);
    expect((await run(['--mapping', 'people.yaml', '--input', 'people.csv'], base)).code).toBe(3);
    const { code, stdout } = await run(['--mapping', 'people.yaml', '--input', 'rejects.csv'], base);
    // The duplicate is no longer a duplicate in the rejects file alone; the empty name still is a reject.
    expect(code).toBe(3);
    expect(stdout).toMatch(/rejected\s+1  -> rejects\.rejects\.csv\n/);
    expect(readFileSync(join(base, 'rejects.rejects.csv'), 'utf8').split('\r\n')[0]).toBe(
      '\uFEFFid,first,last,owner,_row,_field,_code,_message,_rule,_raw',
    );
  });

  it('records the reader cannot read go to the rejects with their raw text', async () => {
    const base = freshDir('unreadable');
    writeFileSync(join(base, 'people.yaml'), PEOPLE_MAPPING);
    writeFileSync(join(base, 'bad.csv'), 'id,first,last,owner\nP-1,Ada,Lovelace,sam\nP-2,Bob,Smith,sam,extra\n');
    const { code, stdout } = await run(['--mapping', 'people.yaml', '--input', 'bad.csv'], base);
    expect(code).toBe(3);
    expect(stdout).toContain('1  SOURCE_COLUMN_COUNT: Expected 4 fields, found 5 (first at row 3)');
    expect(readFileSync(join(base, 'rejects.csv'), 'utf8').split('\r\n')[1]).toBe(
      ',,,,3,,SOURCE_COLUMN_COUNT,"Expected 4 fields, found 5",,"P-2,Bob,Smith,sam,extra"',
    );
  });

  it('checks the columns of a workbook before any row', async () => {
    const { code, stderr } = await run([
      '--mapping',
      'samples/plans/organisations.yaml',
      '--input',
      'samples/contacts.xlsx',
      '--rejects',
      join(dir, 'xlsx-rejects.csv'),
    ]);
    expect(code).toBe(2);
    expect(stderr).toContain('the input has no column `company`, which the mapping reads');
    expect(existsSync(join(dir, 'xlsx-rejects.csv'))).toBe(false);
  });

  it('exit 2: never overwrites a file it did not write', async () => {
    const base = join(dir, 'single');
    writeFileSync(join(base, 'people.csv'), PEOPLE_CSV);
    writeFileSync(join(base, 'mine.csv'), 'precious\n');
    const { code, stderr } = await run(
      ['--mapping', 'people.yaml', '--input', 'people.csv', '--rejects', 'mine.csv'],
      base,
    );
    expect(code).toBe(2);
    expect(stderr).toContain('[EXPORT_WRITE]');
    expect(readFileSync(join(base, 'mine.csv'), 'utf8')).toBe('precious\n');
  });

  it.each([
    [
      'a mapping with an unknown target',
      PEOPLE_MAPPING.replace('to: lastName', 'to: lastNam'),
      'people.csv',
      /error \[MAPPING_INVALID\] at .*people\.yaml, line 7, fields\[1\]\.to: unknown target `lastNam`/,
    ],
    [
      'a column the input lacks',
      PEOPLE_MAPPING.replace('column: owner', 'column: Owner Name'),
      'people.csv',
      /error \[MAPPING_INVALID\].*Owner Name/,
    ],
    ['an input that does not exist', PEOPLE_MAPPING, 'nobody.csv', /error \[SOURCE_NOT_FOUND\]/],
    [
      'a mapping with a ref',
      PEOPLE_MAPPING.replace('fields:\n', 'fields:\n  - to: organisation\n    ref: orgs\n    key: "{{org}}"\n'),
      'people.csv',
      /error \[MAPPING_REFERENCE\] at .*people\.yaml, line 6, fields\[0\]\.ref: the mapping links to step `orgs` with `ref`, which only a plan can provide/,
    ],
  ])('exit 2: %s', async (_title, mapping, input, message) => {
    const base = freshDir('broken');
    writeFileSync(join(base, 'people.yaml'), mapping);
    writeFileSync(join(base, 'people.csv'), PEOPLE_CSV);
    const { code, stderr } = await run(['--mapping', 'people.yaml', '--input', input], base);
    expect(stderr).toMatch(message);
    expect(code).toBe(2);
    expect(existsSync(join(base, 'rejects.csv'))).toBe(false);
  });

  it.each([
    [[], 'give --mapping and --input, or --plan'],
    [['--mapping', 'm.yaml'], '--mapping needs --input: the file to validate'],
    [
      ['--plan', 'p.yaml', '--input', 'x.csv'],
      "--input does not go with --plan: the plan names each step's mapping and input",
    ],
    [
      ['--mapping', 'm.yaml', '--input', 'x.csv', '--rejects-dir', 'out'],
      '--rejects-dir goes with --plan; with --mapping use --rejects FILE',
    ],
    [['--mapping', 'm.yaml', '--input', 'x.csv', 'extra'], 'validate takes no positional arguments, got "extra"'],
  ])('usage error %j', async (args, message) => {
    const { code, stderr } = await run(args);
    expect(code).toBe(2);
    expect(stderr).toContain(`error [USAGE]: ${message}`);
  });
});

describe('crm-ferry validate --mapping --online (sandbox)', () => {
  const online = (): string[] => ['--online', '--base-url', sandbox.url, '--token', sandbox.token];

  it('rejects rows whose names the account lacks, with suggestions', async () => {
    const base = freshDir('online');
    writeFileSync(join(base, 'people.yaml'), PEOPLE_MAPPING);
    writeFileSync(join(base, 'people.csv'), 'id,first,last,owner\nP-1,Ada,Lovelace,SAM\nP-2,Bob,Smith,samm\n');
    const { code, stdout, stderr } = await run(
      ['--mapping', 'people.yaml', '--input', 'people.csv', ...online()],
      base,
    );
    expect(stderr).toBe('');
    expect(code).toBe(3);
    expect(stdout).toContain('(names checked against the account)');
    const lines = readFileSync(join(base, 'rejects.csv'), 'utf8').split('\r\n');
    expect(lines[1]).toBe(
      'P-2,Bob,Smith,samm,3,fields[2],MAPPING_UNKNOWN_NAME,"owner ""samm"" is not a user in the account; did you mean sam?",fields[2],',
    );
    expect(lines).toHaveLength(3);
  });

  it('exit 2 before any row when a constant name is unknown', async () => {
    const base = freshDir('online-constant');
    const mapping = `${PEOPLE_MAPPING}  - to: custom\n    definition: Industy\n    tag: null\n    value: Retail\n`;
    writeFileSync(join(base, 'people.yaml'), mapping);
    writeFileSync(join(base, 'people.csv'), PEOPLE_CSV);
    const { code, stdout, stderr } = await run(
      ['--mapping', 'people.yaml', '--input', 'people.csv', ...online()],
      base,
    );
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(
      /error \[MAPPING_UNKNOWN_NAME\] at .*people\.yaml, line 12, fields\[3\]\.definition: unknown custom field `Industy` without a data tag of parties; did you mean `Industry`\?/,
    );
    expect(existsSync(join(base, 'rejects.csv'))).toBe(false);
    // Offline the same mapping is fine: constant names are not checked.
    const offline = await run(['--mapping', 'people.yaml', '--input', 'people.csv'], base);
    expect(offline.code).toBe(3);
  });

  it('exit 4 when the service refuses the token', async () => {
    const base = join(dir, 'online');
    const { code, stderr } = await run(
      [
        '--mapping',
        'people.yaml',
        '--input',
        'people.csv',
        '--online',
        '--base-url',
        sandbox.url,
        '--token',
        'not-a-token',
      ],
      base,
    );
    expect(stderr).toMatch(/error \[API_UNAUTHORIZED\]/);
    expect(code).toBe(4);
  });
});

const ORGS_MAPPING = `version: 1
entity: party
key: "{{cid}}"
fields:
  - to: name
    value: { column: name }
`;

const CONTACTS_MAPPING = `version: 1
entity: party
key: "{{id}}"
fields:
  - to: lastName
    value: { column: last }
  - to: organisation
    ref: orgs
    key: "{{org}}"
`;

function planFolder(name: string, plan: string): string {
  const base = freshDir(name);
  writeFileSync(join(base, 'orgs.yaml'), ORGS_MAPPING);
  writeFileSync(join(base, 'contacts.yaml'), CONTACTS_MAPPING);
  writeFileSync(join(base, 'orgs.csv'), 'cid,name\nC-1,Acme\nC-2,\n');
  writeFileSync(join(base, 'contacts.csv'), 'id,last,org\nP-1,Lovelace,C-1\nP-2,Smith,C-2\nP-3,Jones,C-9\n');
  writeFileSync(join(base, 'plan.yaml'), plan);
  return base;
}

const PLAN = `version: 1
steps:
  - name: contacts
    mapping: contacts.yaml
    input: contacts.csv
  - name: orgs
    mapping: orgs.yaml
    input: orgs.csv
`;

describe('crm-ferry validate --plan', () => {
  it('exit 0 on the sample plan, steps in reference order', async () => {
    const out = freshDir('sample-rejects');
    const { code, stdout, stderr } = await run(['--plan', 'samples/plans/contacts.plan.yaml', '--rejects-dir', out]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.indexOf('Step organisations:')).toBeGreaterThan(0);
    expect(stdout.indexOf('Step organisations:')).toBeLessThan(stdout.indexOf('Step people:'));
    expect(stdout).toMatch(
      /Step people: samples\/contacts\.csv with samples\/plans\/people\.yaml\n  rows read\s+30\n  ok\s+30\n/,
    );
    expect(readdirSync(out)).toEqual([]);
  });

  it('exit 0 on the legacy v1 migration plan: v1 records are not checked against a header', async () => {
    const out = freshDir('v1-rejects');
    const { code, stdout, stderr } = await run(['--plan', 'mappings/plans/v1-migration.yaml', '--rejects-dir', out]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    // One party export read twice: organisations first, so that people can link to them.
    expect(stdout).toMatch(
      /Step organisations: samples\/v1\/parties\.xml with mappings\/v1-organisations\.yaml\n  rows read\s+1\n  ok\s+1\n/,
    );
    expect(stdout).toMatch(
      /Step people: samples\/v1\/parties\.xml with mappings\/v1-people\.yaml\n  rows read\s+2\n  ok\s+2\n/,
    );
    expect(stdout.indexOf('Step organisations:')).toBeLessThan(stdout.indexOf('Step people:'));
    expect(stdout.indexOf('Step people:')).toBeLessThan(stdout.indexOf('Step opportunities:'));
    expect(stdout).toMatch(/All rows are valid\./);
    // A v1 phone number that is not valid is kept as typed (the mapping's `invalid: keep`), and said.
    expect(stdout).toMatch(/Step people:[^]*warnings:  -> .*people\.warnings\.csv\n\s+1  VALUE_KEPT\n/);
    expect(stdout).toMatch(/Step tasks:[^]*left out: "partyName": the party is linked by its id/);
    expect(readdirSync(out)).toEqual(['people.warnings.csv']);
  });

  it('--online checks the names of every step before any row', async () => {
    const base = planFolder('plan-online', PLAN);
    writeFileSync(join(base, 'contacts.yaml'), `${CONTACTS_MAPPING}  - to: owner\n    value: nobody\n`);
    const { code, stderr } = await run(
      ['--plan', 'plan.yaml', '--online', '--base-url', sandbox.url, '--token', sandbox.token],
      base,
    );
    expect(stderr).toMatch(
      /error \[MAPPING_UNKNOWN_NAME\] at .*contacts\.yaml, line 11, fields\[2\]\.value: unknown user `nobody`/,
    );
    expect(code).toBe(2);
    expect(readdirSync(base).filter((f) => f.endsWith('.rejects.csv'))).toEqual([]);
  });

  it('exit 3: links to missing or rejected rows of an earlier step are warnings (rejects when required), one file per step', async () => {
    const base = planFolder('plan', PLAN);
    const { code, stdout, stderr } = await run(['--plan', 'plan.yaml', '--rejects-dir', 'out/rejects'], base);
    expect(stderr).toBe('');
    expect(code).toBe(3);
    expect(stdout).toContain('Plan plan.yaml: 2 steps run');
    expect(stdout.indexOf('Step orgs:')).toBeLessThan(stdout.indexOf('Step contacts:'));
    expect(stdout).toMatch(
      /Step contacts:[^]*rejected\s+0\n  warnings:  -> out\/rejects\/contacts\.warnings\.csv\n\s+2  LINK_UNRESOLVED\n/,
    );
    // The folder is created when missing.
    const out = join(base, 'out', 'rejects');
    expect(readdirSync(out).sort()).toEqual(['contacts.warnings.csv', 'orgs.rejects.csv']);
    const contacts = readFileSync(join(out, 'contacts.warnings.csv'), 'utf8').split('\r\n');
    expect(contacts.slice(1)).toEqual([
      'P-2,Smith,C-2,3,organisation,LINK_UNRESOLVED,"org ""C-2"": the row with this key in step orgs was rejected; the record is written without organisation",fields[1],',
      'P-3,Jones,C-9,4,organisation,LINK_UNRESOLVED,"org ""C-9"": no row with this key in step orgs; the record is written without organisation",fields[1],',
      '',
    ]);
    expect(readFileSync(join(out, 'orgs.rejects.csv'), 'utf8')).toMatch(
      /^\uFEFFcid,name,_row,_field,_code,_message,_rule,_raw\r\nC-2,,3,name,MAPPING_VALUE,/,
    );

    // `required: true` makes the same links rejects.
    writeFileSync(
      join(base, 'contacts.yaml'),
      readFileSync(join(base, 'contacts.yaml'), 'utf8').replace('key: "{{org}}"', 'key: "{{org}}"\n    required: true'),
    );
    const strict = await run(['--plan', 'plan.yaml', '--rejects-dir', 'out/rejects'], base);
    expect(strict.stdout).toMatch(/rejected\s+2  -> out\/rejects\/contacts\.rejects\.csv\n/);
    expect(readFileSync(join(out, 'contacts.rejects.csv'), 'utf8').split('\r\n').slice(1)).toEqual([
      'P-2,Smith,C-2,3,fields[1],MAPPING_REFERENCE,"org ""C-2"": the row with this key in step orgs was rejected",fields[1],',
      'P-3,Jones,C-9,4,fields[1],MAPPING_REFERENCE,"org ""C-9"": no row with this key in step orgs",fields[1],',
      '',
    ]);
    // The warnings file of the first run is gone: its rows are rejects now.
    expect(readdirSync(out).sort()).toEqual(['contacts.rejects.csv', 'orgs.rejects.csv']);
  });

  it.each([
    [
      'a cycle',
      PLAN,
      (base: string) =>
        writeFileSync(
          join(base, 'orgs.yaml'),
          `${ORGS_MAPPING}  - to: organisation\n    ref: contacts\n    key: "{{cid}}"\n`,
        ),
      /error \[PLAN_CYCLE\].*: the steps refer to each other in a circle: contacts -> orgs -> contacts/,
    ],
    [
      'a ref to an unknown step',
      PLAN.replace('name: orgs', 'name: organisations'),
      () => undefined,
      /error \[PLAN_INVALID\] at .*contacts\.yaml, line 8, fields\[1\]\.ref: step contacts refers to step `orgs`, which the plan does not have/,
    ],
    [
      'a missing input',
      PLAN.replace('input: orgs.csv', 'input: org.csv'),
      () => undefined,
      /error \[PLAN_INVALID\] at .*plan\.yaml, line 8, steps\[1\]\.input: step orgs: the input file org\.csv does not exist/,
    ],
  ])('exit 2: %s', async (_title, plan, change, message) => {
    const base = planFolder('plan-broken', plan);
    change(base);
    const { code, stderr } = await run(['--plan', 'plan.yaml'], base);
    expect(stderr).toMatch(message);
    expect(code).toBe(2);
    expect(readdirSync(base).filter((f) => f.endsWith('.rejects.csv'))).toEqual([]);
  });
});

describe('crm-ferry validate --plan with a link to several steps', () => {
  const KASES_MAPPING = `version: 1
entity: kase
key: "{{id}}"
fields:
  - to: name
    value: { column: name }
  - to: party
    ref: [people, orgs]
    key: "{{party}}"
`;
  const PEOPLE = `version: 1
entity: party
key: "{{id}}"
fields:
  - to: lastName
    value: { column: last }
`;
  // Listed with the linking step first: the order comes from the references.
  const MULTI_PLAN = `version: 1
steps:
  - name: kases
    mapping: kases.yaml
    input: kases.csv
  - name: people
    mapping: people.yaml
    input: people.csv
  - name: orgs
    mapping: orgs.yaml
    input: orgs.csv
`;

  function multiFolder(name: string, kasesMapping = KASES_MAPPING): string {
    const base = freshDir(name);
    writeFileSync(join(base, 'kases.yaml'), kasesMapping);
    writeFileSync(join(base, 'people.yaml'), PEOPLE);
    writeFileSync(join(base, 'orgs.yaml'), ORGS_MAPPING);
    writeFileSync(join(base, 'kases.csv'), 'id,name,party\nK-1,One,P-1\nK-2,Two,C-1\nK-3,Three,X-7\nK-4,Four,Z-9\n');
    writeFileSync(join(base, 'people.csv'), 'id,last\nP-1,Lovelace\nX-7,Clash\n');
    writeFileSync(join(base, 'orgs.csv'), 'cid,name\nC-1,Acme\nX-7,Shared\n');
    writeFileSync(join(base, 'plan.yaml'), MULTI_PLAN);
    return base;
  }

  it('exit 3: finds keys in either step, rejects a key both have and one neither has', async () => {
    const base = multiFolder('multi');
    const { code, stdout, stderr } = await run(['--plan', 'plan.yaml', '--rejects-dir', 'out'], base);
    expect(stderr).toBe('');
    expect(code).toBe(3);
    expect(stdout.indexOf('Step people:')).toBeLessThan(stdout.indexOf('Step orgs:'));
    expect(stdout.indexOf('Step orgs:')).toBeLessThan(stdout.indexOf('Step kases:'));
    expect(readdirSync(join(base, 'out'))).toEqual(['kases.rejects.csv']);
    const rejects = readFileSync(join(base, 'out', 'kases.rejects.csv'), 'utf8').split('\r\n');
    expect(rejects.slice(1)).toEqual([
      'K-3,Three,X-7,4,fields[1],MAPPING_REFERENCE,"party ""X-7"": this key is in steps people and orgs, so the link is ambiguous; keys must be unique across the steps one ref names",fields[1],',
      'K-4,Four,Z-9,5,fields[1],MAPPING_REFERENCE,"party ""Z-9"": no row with this key in steps people or orgs",fields[1],',
      '',
    ]);
  });

  it('exit 2: an unknown step in the list is named with its line and a suggestion', async () => {
    const base = multiFolder('multi-typo', KASES_MAPPING.replace('[people, orgs]', '[people, orgz]'));
    const { code, stderr } = await run(['--plan', 'plan.yaml'], base);
    expect(stderr).toMatch(
      /error \[PLAN_INVALID\] at .*kases\.yaml, line 8, fields\[1\]\.ref\[1\]: step kases refers to step `orgz`, which the plan does not have; did you mean `orgs`\?/,
    );
    expect(code).toBe(2);
  });
});
