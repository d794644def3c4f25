import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/fake-io.ts';
import { compileMapping } from '../../src/mapping/compile.ts';
import { loadMapping } from '../../src/mapping/load.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-mapping-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[], cwd = ROOT): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(args, { cwd });
}

describe('crm-ferry mapping schema', () => {
  it('prints the JSON Schema', async () => {
    const { code, stdout, stderr } = await run(['mapping', 'schema']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const schema = JSON.parse(stdout) as { title: string; required: string[] };
    expect(schema.title).toBe('crm-ferry mapping file');
    expect(schema.required).toEqual(['version', 'entity', 'key', 'fields']);
  });

  it('writes it to --out', async () => {
    const out = join(dir, 'mapping.schema.json');
    const { code, stderr } = await run(['mapping', 'schema', '--out', out]);
    expect(code).toBe(0);
    expect(stderr).toBe(`wrote ${out}\n`);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toHaveProperty('$defs.Condition');
  });

  it('refuses arguments', async () => {
    const { code, stderr } = await run(['mapping', 'schema', 'extra']);
    expect(code).toBe(2);
    expect(stderr).toContain('error [USAGE]: mapping schema takes no arguments, got "extra"');
  });
});

describe('crm-ferry mapping init', () => {
  it('drafts a mapping of samples/contacts.csv to standard output', async () => {
    const { code, stdout, stderr } = await run(['mapping', 'init', 'samples/contacts.csv']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^# Drafted by crm-ferry mapping init from contacts.csv \(csv\)/);
    expect(stdout).toContain('entity: party');
    expect(stderr).toBe(
      'mapped 12 of 13 columns; key {{email}}\nnot carried (under leaveOut:, the entry to add as a comment):\n' +
        `  "date_added": no standard field takes it: create a custom field "date_added" (Date) in the account's settings, then map it\n`,
    );
  });

  it('drafts a file of 10,000 columns into a mapping that loads, and says which columns it left out and why', async () => {
    const input = join(dir, 'wide.csv');
    const columns = Array.from({ length: 10_000 }, (_, i) => `col${i}`);
    writeFileSync(input, `${columns.join(',')}\n${columns.map((_, i) => `v${i}`).join(',')}\n`);
    const out = join(dir, 'wide.yaml');
    const { code, stderr } = await run(['mapping', 'init', input, '--out', out]);
    expect(code, stderr).toBe(0);
    expect(stderr).not.toContain('draft.yaml');
    expect(stderr).toMatch(
      /^wrote .*wide\.yaml\nmapped 1 of 10000 columns; key \{\{col0\}\}; not mapped: col\d+, .* and [\d,]+ more\nnot carried \(under leaveOut:, the entry to add as a comment\):\n(  "col\d+": no standard field takes it: .*\n){10}  and [\d,]+ more \(listed in the draft\)\n[\d,]+ columns are not drafted: a mapping file holds at most 5,000 entries and 1 MB; carry them in a second mapping/,
    );
    await compileMapping(await loadMapping(out), { file: out });
  });

  it('writes a draft of samples/contacts.xlsx that loads and compiles', async () => {
    const out = join(dir, 'contacts.yaml');
    const { code } = await run(['mapping', 'init', 'samples/contacts.xlsx', '--out', out]);
    expect(code).toBe(0);
    const mapping = await loadMapping(out);
    const compiled = await compileMapping(mapping, { file: out });
    expect(compiled.columns).toContain('Email');
  });

  it('never writes over an existing file (an edited mapping, the input itself) unless --force', async () => {
    const edited = join(dir, 'edited.yaml');
    writeFileSync(edited, '# my hand-made mapping\n');
    const refused = await run(['mapping', 'init', 'samples/contacts.csv', '--out', edited]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      `error [USAGE]: ${edited} already exists; nothing was written\n  Give another --out, or --force to replace the file.\n`,
    );
    expect(readFileSync(edited, 'utf8')).toBe('# my hand-made mapping\n');
    const input = join(dir, 'input.csv');
    writeFileSync(input, readFileSync(join(ROOT, 'samples/contacts.csv')));
    expect((await run(['mapping', 'init', input, '--out', input])).code).toBe(2);
    expect(readFileSync(input)).toEqual(readFileSync(join(ROOT, 'samples/contacts.csv')));
    const forced = await run(['mapping', 'init', 'samples/contacts.csv', '--out', edited, '--force']);
    expect(forced.code).toBe(0);
    expect(readFileSync(edited, 'utf8')).toMatch(/^# Drafted by crm-ferry mapping init/);
  });

  it('says why --out cannot be written', async () => {
    const missing = await run([
      'mapping',
      'init',
      'samples/contacts.csv',
      '--out',
      join(dir, 'no-such-folder', 'm.yaml'),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error \[USAGE\]: cannot write .*m\.yaml: its folder does not exist\n/);
  });

  it.each([
    ['v1/opportunities.xml', 'opportunity'],
    ['v1/kases.xml', 'kase'],
    ['v1/tasks.xml', 'task'],
    ['v1/history.xml', 'entry'],
  ])("drafts a legacy export's own records: samples/%s as %s", async (sample, entity) => {
    const { code, stdout, stderr } = await run(['mapping', 'init', `samples/${sample}`]);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(new RegExp(`^entity: ${entity}  # the file holds v1 \\w+ records$`, 'm'));
    expect(stderr).toMatch(
      new RegExp(`^drafted as ${entity}: the file holds v1 \\w+ records \\(--entity to choose another\\)$`, 'm'),
    );
    // --entity still decides when given.
    const asked = await run(['mapping', 'init', `samples/${sample}`, '--entity', 'party']);
    expect(asked.stdout).toMatch(/^entity: party$/m);
    expect(asked.stderr).not.toContain('drafted as');
  });

  it('starts from the ready-made mapping whose every column the file has, and says so; --draft drafts instead', async () => {
    const { code, stdout, stderr } = await run(['mapping', 'init', 'samples/crm/salesforce-opportunities.csv']);
    expect(code, stderr).toBe(0);
    expect(stderr).toMatch(
      /^the columns match the ready-made mappings\/salesforce-opportunities\.yaml \(it reads \d+ of the 15 columns\): started from it/,
    );
    expect(stdout).toMatch(
      /^# Started by crm-ferry mapping init from the ready-made mappings\/salesforce-opportunities\.yaml:\n/,
    );
    expect(stdout.endsWith(readFileSync(join(ROOT, 'mappings/salesforce-opportunities.yaml'), 'utf8'))).toBe(true);
    const drafted = await run([
      'mapping',
      'init',
      'samples/crm/salesforce-opportunities.csv',
      '--draft',
      '--entity',
      'opportunity',
    ]);
    expect(drafted.stdout).toMatch(/^# Drafted by crm-ferry mapping init/);
    // A file lacking one of the mapping's columns is drafted from its columns.
    const fewer = join(dir, 'hubspot-fewer.csv');
    const [head = '', ...rows] = readFileSync(join(ROOT, 'samples/crm/hubspot-contacts.csv'), 'utf8').split('\n');
    writeFileSync(fewer, [head.replace('Job Title', 'Role'), ...rows].join('\n'));
    const partial = await run(['mapping', 'init', fewer]);
    expect(partial.stdout).toMatch(/^# Drafted by crm-ferry mapping init/);
    expect(partial.stderr).not.toContain('ready-made');
  });

  it.each([
    [['mapping', 'init'], 'error [USAGE]: mapping init takes exactly one FILE, got 0'],
    [
      ['mapping', 'init', 'samples/contacts.csv', '--entity', 'person'],
      'error [USAGE]: --entity must be one of party, kase, opportunity, entry, task, got "person"',
    ],
    [['mapping', 'init', 'samples/contacts.csv', '--header-row', 'x'], 'error [USAGE]: '],
    [['mapping', 'init', 'samples/missing.csv'], 'error [SOURCE_NOT_FOUND]'],
  ])('refuses %j', async (args, message) => {
    const { code, stderr } = await run(args);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });
});
