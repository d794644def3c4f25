import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CrmClient } from '../../src/client/index.ts';
import { runImport } from '../../src/load/index.ts';
import { allPages, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-v1-items-'));
let box: TestSandbox | undefined;
afterAll(async () => {
  await box?.close();
  rmSync(dir, { recursive: true, force: true });
});

type Item = Record<string, string>;
interface LegacyParty {
  name: string;
  email: Item[];
  phone: Item[];
  address: Item[];
  website: Item[];
}

/** The contact items of each party of a v1 XML export, read with nothing of crm-ferry's. */
function legacyParties(xml: string): LegacyParty[] {
  const parties: LegacyParty[] = [];
  for (const [, kind, body] of xml.matchAll(/<(person|organisation)>([\s\S]*?)<\/\1>/g)) {
    const text = (tag: string, within: string): string =>
      (new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(within)?.[1] ?? '').replace(/&amp;/g, '&');
    const contacts = /<contacts>([\s\S]*?)<\/contacts>/.exec(body ?? '')?.[1] ?? '';
    const items = (tag: string): Item[] =>
      [...contacts.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map(([, inner]) =>
        Object.fromEntries([...(inner ?? '').matchAll(/<(\w+)>([^<]*)<\/\1>/g)].map(([, k, v]) => [k, v])),
      );
    const name =
      kind === 'person' ? `${text('firstName', body ?? '')} ${text('lastName', body ?? '')}` : text('name', body ?? '');
    parties.push({
      name,
      email: items('email'),
      phone: items('phone'),
      address: items('address'),
      website: items('website'),
    });
  }
  return parties;
}

describe('the bundled v1 account, migrated with its plan', () => {
  it('carries every email, phone, address and website of every party, each with its type', async () => {
    box = await startTestSandbox();
    const client = new CrmClient({ baseUrl: box.url, auth: box.token });
    const summary = await runImport(
      {
        source: { kind: 'plan', planFile: join(ROOT, 'mappings/plans/v1-migration.yaml') },
        stateDir: join(dir, 'state'),
      },
      { client, account: { baseUrl: box.url, account: box.url } },
    );
    await client.close();
    expect(summary.stopped).toBeNull();
    expect(
      summary.steps
        .filter((s) => s.step === 'organisations' || s.step === 'people')
        .map((s) => [s.step, s.created, s.rejected]),
    ).toEqual([
      ['organisations', 1, 0],
      ['people', 2, 0],
    ]);

    const legacy = legacyParties(readFileSync(join(ROOT, 'samples/v1/parties.xml'), 'utf8'));
    // The sample has more than two of some kinds: what "the first one or two" used to drop.
    expect(legacy.find((p) => p.name === 'Ada Lovelace')?.phone).toHaveLength(3);
    expect(legacy.find((p) => p.name === 'Ada Lovelace')?.address).toHaveLength(2);
    const parties = (await allPages(box, '/parties', 'parties')) as Array<Record<string, any>>;
    const nameOf = (p: Record<string, any>): string => (p.type === 'person' ? `${p.firstName} ${p.lastName}` : p.name);
    expect(parties.map(nameOf).sort()).toEqual(legacy.map((p) => p.name).sort());
    for (const old of legacy) {
      const party = parties.find((p) => nameOf(p) === old.name) as Record<string, any>;
      expect(
        party.emailAddresses.map((e: Item) => [e.type, e.address]),
        old.name,
      ).toEqual(old.email.map((e) => [e.type, e.emailAddress]));
      // Numbers are written in international form: the last digits are the same.
      expect(
        party.phoneNumbers.map((p: Item) => [p.type, p.number?.replace(/\D/g, '').slice(-7)]),
        old.name,
      ).toEqual(old.phone.map((p) => [p.type, p.phoneNumber?.replace(/\D/g, '').slice(-7)]));
      // The service lists every part of an address, null where there is none.
      const filled = (a: Record<string, string | null>): Item =>
        Object.fromEntries(Object.entries(a).filter(([key, value]) => key !== 'id' && value !== null)) as Item;
      expect(party.addresses.map(filled), old.name).toEqual(old.address.map(filled));
      expect(
        party.websites.map((w: Item) => [w.type, w.service, w.address]),
        old.name,
      ).toEqual(old.website.map((w) => [w.type, w.webService, w.webAddress]));
    }
  });
});
