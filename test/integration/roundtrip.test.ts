import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { CrmClient } from '../../src/client/index.ts';
import { normaliseExportOptions, runExport } from '../../src/export/index.ts';
import { runImport } from '../../src/load/index.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-roundtrip-'));
/** The bundled round-trip mappings: the export writes the columns they read. */
const MAPPINGS = [join(ROOT, 'mappings/roundtrip-organisations.yaml'), join(ROOT, 'mappings/roundtrip-people.yaml')];
const boxes: TestSandbox[] = [];
afterAll(async () => {
  for (const box of boxes) await box.close();
  rmSync(dir, { recursive: true, force: true });
});

async function exportParties(box: TestSandbox, out: string): Promise<Array<Record<string, string>>> {
  const client = new CrmClient({ baseUrl: box.url, auth: box.token });
  try {
    // --raw: the file is for the importer, not a spreadsheet, so texts stay exactly as they are.
    await runExport(normaliseExportOptions({ entity: 'parties', out, raw: true, mapping: MAPPINGS, cwd: dir }), { client, account: box.url });
  } finally {
    await client.close();
  }
  return parse(readFileSync(out, 'utf8'), { bom: true, columns: true }) as Array<Record<string, string>>;
}

describe('round trip: export from one account, import into another', () => {
  it('every exported field of every party is the same in the second account', async () => {
    const a = await startTestSandbox();
    const b = await startTestSandbox();
    boxes.push(a, b);
    const post = async (party: Record<string, unknown>): Promise<number> => {
      const answer = await a.v2('POST', '/parties', { party });
      expect(answer.status).toBe(201);
      return answer.body.party.id;
    };
    const acme = await post({ type: 'organisation', name: 'Acme Ltd', about: 'Widgets, "quoted", and\nmore', emailAddresses: [{ type: 'Work', address: 'info@acme.example' }], addresses: [{ type: 'Office', street: '1 Market St', city: 'Leeds', zip: 'LS1 6DT', country: 'United Kingdom' }], tags: [{ name: 'customer' }], fields: [{ definition: { name: 'Industry', tag: null }, value: 'Retail' }] });
    await post({ type: 'organisation', name: 'Ångström Optik AB', websites: [{ type: 'Work', service: 'URL', address: 'https://angstrom.example' }] });
    await post({ type: 'person', title: 'Dr', firstName: 'Ada', lastName: 'Lovelace', jobTitle: 'Head of Engineering', organisation: { id: acme }, emailAddresses: [{ type: 'Work', address: 'ada@acme.example' }], phoneNumbers: [{ type: 'Work', number: '+441131234567' }], tags: [{ name: 'vip' }, { name: 'newsletter' }], fields: [{ definition: { name: 'Customer since', tag: null }, value: '2021-06-01' }, { definition: { name: 'VIP', tag: null }, value: true }, { definition: { name: 'Account number', tag: null }, value: 'AB-1234' }, { definition: { name: 'Preferred language', tag: null }, value: 'English' }] });
    await post({ type: 'person', firstName: 'Grace', lastName: 'Hopper', about: '=1+1 is not a formula here' });

    const exported = await exportParties(a, join(dir, 'parties.csv'));
    writeFileSync(
      join(dir, 'plan.yaml'),
      `version: 1\nsteps:\n  - { name: organisations, mapping: ${join(ROOT, 'mappings/roundtrip-organisations.yaml')}, input: parties.csv }\n  - { name: people, mapping: ${join(ROOT, 'mappings/roundtrip-people.yaml')}, input: parties.csv }\n`,
    );
    const client = new CrmClient({ baseUrl: b.url, auth: b.token });
    const summary = await runImport({ source: { kind: 'plan', planFile: join(dir, 'plan.yaml') }, stateDir: join(dir, 'state') }, { client, account: { baseUrl: b.url, account: b.url } });
    await client.close();
    expect(summary.steps.map((s) => s.rejected)).toEqual([0, 0]);
    expect(summary.steps.map((s) => s.created)).toEqual([2, 2]);

    const again = await exportParties(b, join(dir, 'parties-b.csv'));
    // Ids and times are the second account's own; tags come back in any order.
    const comparable = (rows: Array<Record<string, string>>): Array<Record<string, string>> =>
      rows
        .map((row) => {
          const rest: Record<string, string> = { ...row, tags: (row.tags ?? '').split(';').sort().join(';') };
          for (const own of ['id', 'createdAt', 'updatedAt']) delete rest[own];
          return rest;
        })
        .sort((x, y) => (x.name ?? '').localeCompare(y.name ?? ''));
    expect(comparable(again)).toEqual(comparable(exported));
    expect(again.find((r) => r.lastName === 'Hopper')?.about).toBe('=1+1 is not a formula here');
  });
});
