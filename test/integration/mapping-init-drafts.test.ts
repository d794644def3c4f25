import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { draftMapping } from '../../src/mapping/init.ts';
import type { Entity } from '../../src/mapping/schema.ts';
import { validateMapping } from '../../src/plan/validate.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-init-drafts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * `mapping init` on customers' exports: each draft is held to a mapping checked by hand
 * (test/fixtures/init/, every column placed where a person would place it, every transform
 * chosen from the values with a comment saying why), and each party draft validates its own
 * file with no rejects. An opportunity needs the party of another step, which only a plan
 * gives (samples/plans), so those drafts are held to their text alone.
 */
const DRAFTS: Array<[sample: string, entity: Entity, expected: string]> = [
  ['locales/contacts-fr.csv', 'party', 'locales-contacts-fr.yaml'],
  ['locales/contacts-de.csv', 'party', 'locales-contacts-de.yaml'],
  ['locales/contacts-us.csv', 'party', 'locales-contacts-us.yaml'],
  ['contacts.csv', 'party', 'contacts.yaml'],
  ['contacts.xlsx', 'party', 'contacts.yaml'.replace('contacts', 'contacts-xlsx')],
  ['contacts-win1252.csv', 'party', 'contacts-win1252.yaml'],
  ['crm/hubspot-contacts.csv', 'party', 'crm-hubspot-contacts.yaml'],
  ['crm/hubspot-companies.csv', 'party', 'crm-hubspot-companies.yaml'],
  ['crm/salesforce-contacts.csv', 'party', 'crm-salesforce-contacts.yaml'],
  ['crm/salesforce-accounts.csv', 'party', 'crm-salesforce-accounts.yaml'],
  ['crm/pipedrive-persons.csv', 'party', 'crm-pipedrive-persons.yaml'],
  ['crm/pipedrive-organizations.csv', 'party', 'crm-pipedrive-organizations.yaml'],
  ['crm/salesforce-opportunities.csv', 'opportunity', 'crm-salesforce-opportunities.yaml'],
  ['crm/pipedrive-deals.csv', 'opportunity', 'crm-pipedrive-deals.yaml'],
];

describe('mapping init on real exports', () => {
  it.each(DRAFTS)('%s (%s): the hand-checked draft', async (sample, entity, expected) => {
    const draft = await draftMapping(join(ROOT, 'samples', sample), { entity });
    expect(draft.yaml).toBe(readFileSync(join(ROOT, 'test/fixtures/init', expected), 'utf8'));
  });

  it.each(DRAFTS.filter(([, entity]) => entity === 'party'))(
    '%s: the draft validates its file with no rejects',
    async (sample, entity) => {
      const input = join(ROOT, 'samples', sample);
      const draft = await draftMapping(input, { entity });
      const mappingFile = join(dir, `${sample.replace(/\W/g, '-')}.yaml`);
      writeFileSync(mappingFile, draft.yaml);
      const report = await validateMapping({ mappingFile, inputFile: input, rejectsFile: join(dir, 'rejects.csv') });
      expect(report.steps.map((s) => ({ rejected: s.rejected, ok: s.ok > 0 }))).toEqual([{ rejected: 0, ok: true }]);
    },
  );

  it('an e-mail column is checked: a malformed address is left out with a warning, the record kept', async () => {
    const input = join(dir, 'klanten.csv');
    writeFileSync(input, 'Voornaam,Achternaam,E-mail\nJan,Bakker,jan@@bakker.nl\nEva,Visser, Eva@Visser.example \n');
    const mappingFile = join(dir, 'klanten.yaml');
    writeFileSync(mappingFile, (await draftMapping(input, { entity: 'party' })).yaml);
    const report = await validateMapping({
      mappingFile,
      inputFile: input,
      rejectsFile: join(dir, 'klanten.rejects.csv'),
    });
    expect(report.steps[0]).toMatchObject({ ok: 2, rejected: 0 });
    expect(report.steps[0]?.warnings.VALUE_DROPPED).toBe(1);
  });

  it.each([
    ['locales/contacts-fr.csv', ['{phone: FR}', '{date: "dd/MM/yyyy"}', '{split: ","}']],
    [
      'locales/contacts-de.csv',
      ['{phone: DE}', '{date: "dd.MM.yyyy"}', '{boolean: {true: ["ja"], false: ["nein", ""]}}'],
    ],
    ['locales/contacts-us.csv', ['{phone: US}', '{date: "MM/dd/yyyy"}', 'boolean', '{split: ";"}']],
  ])('%s: places every column and proposes %j, each with a comment saying why', async (sample, transforms) => {
    const draft = await draftMapping(join(ROOT, 'samples', sample));
    expect(draft.unmatched).toEqual([]);
    const lines = draft.yaml.split('\n');
    for (const transform of transforms) {
      const at = lines.findIndex((line) => line.includes(`transform: [${transform}]`));
      expect(at, transform).toBeGreaterThan(0);
      expect(lines[at - 1], transform).toMatch(/^(#\s+)?\s+# \S/);
    }
  });
});
