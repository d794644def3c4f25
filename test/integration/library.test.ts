import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accountOf,
  connect,
  type CustomTransform,
  FerryError,
  openSource,
  registerSourceFormat,
  runImport,
  runVerify,
  type SourceItem,
  transformRegistry,
  TRANSFORMS,
} from '../../src/index.ts';
import { customerNumber } from '../helpers/customer-number.ts';
import { allPages, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const dir = mkdtempSync(join(tmpdir(), 'ferry-library-'));
let box: TestSandbox;

beforeAll(async () => {
  box = await startTestSandbox();
  writeFileSync(join(dir, 'people.csv'), 'no,first,last\n17,Ada,Lovelace\n4711,Alan,Turing\nnone,Grace,Hopper\n');
  writeFileSync(
    join(dir, 'people.yaml'),
    [
      'version: 1',
      'entity: party',
      'key: "{{no}}"',
      'fields:',
      '  - { to: type, value: person }',
      '  - { to: firstName, value: { column: first } }',
      '  - { to: lastName, value: { column: last } }',
      '  - { to: about, value: { column: no, transform: [{ customerNumber: "K-" }] } }',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'plan.yaml'),
    'version: 1\nsteps:\n  - { name: people, mapping: people.yaml, input: people.csv }\n',
  );
});

afterAll(async () => {
  await box?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('crm-ferry as a module', () => {
  it('refuses a custom transform without the registry that has it, before any row is read', async () => {
    const { client } = await connect({ token: box.token, baseUrl: box.url, env: {} });
    const error = await runImport(
      { source: { kind: 'plan', planFile: join(dir, 'plan.yaml') }, stateDir: join(dir, 'state-without') },
      { client, account: accountOf(client) },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FerryError);
    expect(error).toMatchObject({ code: 'MAPPING_INVALID', message: expect.stringContaining('customerNumber') });
  });

  it('runs a plan with a transform of its own, and verifies the account against it', async () => {
    const transforms = transformRegistry([customerNumber]);
    const { client } = await connect({ token: box.token, baseUrl: box.url, env: {} });
    const account = accountOf(client);
    const stateDir = join(dir, 'state');
    const summary = await runImport(
      { source: { kind: 'plan', planFile: join(dir, 'plan.yaml') }, stateDir },
      { client, account, transforms },
    );
    expect(summary.steps[0]).toMatchObject({ created: 2, rejected: 1 });
    const people = await allPages(box, '/parties', 'parties');
    expect(people.map((p) => p.about).sort()).toEqual(['K-000017', 'K-004711']);
    const verified = await runVerify(
      { source: { kind: 'plan', planFile: join(dir, 'plan.yaml') }, stateDir },
      { client, account, transforms },
    );
    // The two records carry what the transform made: no difference. The row it refused was not
    // carried, by decision, and is listed apart with the transform's reason.
    expect(verified.steps[0]).toMatchObject({ found: 2 });
    expect(verified.differences).toEqual([]);
    expect(verified.notCarried).toEqual([
      expect.objectContaining({
        key: 'none',
        kind: 'rejected',
        reason: expect.stringContaining('no digits in "none"'),
      }),
    ]);
  });

  it('refuses a registry that would change what a built-in name means, or a definition that is none', () => {
    expect(() => transformRegistry([{ ...customerNumber, name: 'trim' }])).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID' }),
    );
    expect(() => transformRegistry([customerNumber, customerNumber])).toThrow(/given twice/);
    expect(() => transformRegistry([{ ...customerNumber, name: 'two words' }])).toThrow(/no usable name/);
    expect(() => transformRegistry([{ name: 'half' } as unknown as CustomTransform])).toThrow(/needs `options`/);
    // The built-in registry is left as it was.
    expect(Object.hasOwn(TRANSFORMS, 'customerNumber')).toBe(false);
  });
});

describe('a source format of its own', () => {
  /** vCard files: one person per BEGIN:VCARD ... END:VCARD block. */
  registerSourceFormat({
    name: 'vcard',
    description: 'vCard contacts',
    extensions: ['.vcf'],
    detect: ({ prefix }) => (prefix.toString('utf8').trimStart().startsWith('BEGIN:VCARD') ? 'vCard file' : undefined),
    async *read(file): AsyncGenerator<SourceItem> {
      const { readFile } = await import('node:fs/promises');
      let row = 0;
      for (const card of (await readFile(file, 'utf8')).split('END:VCARD').filter((c) => c.includes('BEGIN:VCARD'))) {
        row += 1;
        const values: Record<string, string> = {};
        for (const line of card.split(/\r?\n/)) {
          const at = line.indexOf(':');
          if (at > 0 && !line.startsWith('BEGIN')) values[line.slice(0, at)] = line.slice(at + 1);
        }
        yield { kind: 'row', source: 'cards', row, values, location: { file, row } };
      }
    },
  });

  it('is recognised from its first bytes and read through openSource', async () => {
    const file = join(dir, 'cards.txt');
    writeFileSync(
      file,
      'BEGIN:VCARD\nFN:Ada Lovelace\nEMAIL:ada@example.com\nEND:VCARD\nBEGIN:VCARD\nFN:Alan Turing\nEND:VCARD\n',
    );
    const warnings: string[] = [];
    const opened = await openSource(file, { onWarning: (w) => warnings.push(w.message) });
    expect(opened).toMatchObject({ format: 'vcard', reason: 'vCard file', varyingColumns: false });
    const rows = [];
    for await (const item of opened.items) rows.push(item);
    expect(rows.map((r) => (r as { values: Record<string, string> }).values.FN)).toEqual([
      'Ada Lovelace',
      'Alan Turing',
    ]);
    // Named .txt, not .vcf: said, and read all the same.
    expect(warnings).toEqual(['the file is named .txt but holds vCard file; reading it as vcard']);
  });

  it('refuses a second format of a name already taken, and a setting no source has', () => {
    expect(() =>
      registerSourceFormat({ name: 'csv', description: '', extensions: [], read: openSource as never }),
    ).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining('already a format') }),
    );
    expect(() =>
      registerSourceFormat({
        name: 'other',
        description: '',
        extensions: [],
        settings: ['tab' as never],
        read: openSource as never,
      }),
    ).toThrow(/names the setting "tab"/);
  });
});
