import { describe, expect, it } from 'vitest';
import type { CellValue, SourceRow } from '../sources/types.ts';
import { compileMapping } from './compile.ts';
import { countryCodeOf, countryOfDomain } from './countries.ts';
import { parseMapping } from './load.ts';

describe('countryCodeOf', () => {
  it.each([
    ['Nederland', 'NL'],
    ['nederland ', 'NL'],
    ['The Netherlands', 'NL'],
    ['Pays-Bas', 'NL'],
    ['Niederlande', 'NL'],
    ['België', 'BE'],
    ['Belgie', 'BE'],
    ['Belgique', 'BE'],
    ['Deutschland', 'DE'],
    ['Allemagne', 'DE'],
    ['España', 'ES'],
    ['Espagne', 'ES'],
    ['France', 'FR'],
    ['Frankrijk', 'FR'],
    ['Italia', 'IT'],
    ['Schweiz', 'CH'],
    ['UK', 'GB'],
    ['United Kingdom', 'GB'],
    ['nl', 'NL'],
    ['DE', 'DE'],
    ['USA', 'US'],
  ])('%s is %s', (text, code) => {
    expect(countryCodeOf(text)).toBe(code);
  });

  it.each(['', 'Narnia', 'Europe', 'Amsterdam', '12'])('%j names no country', (text) => {
    expect(countryCodeOf(text)).toBeUndefined();
  });

  it('reads the country of an address or a website by its domain', () => {
    expect(countryOfDomain('jan@bakker.nl')).toBe('NL');
    expect(countryOfDomain('https://www.example.co.uk/about')).toBe('GB');
    expect(countryOfDomain('anna@example.com')).toBeUndefined();
  });
});

describe('the phone transform with a country column', () => {
  const mapping = `version: 1
entity: party
key: "{{id}}"
fields:
  - {to: lastName, value: {column: name}}
  - {to: phone, value: {column: tel, transform: [{phone: {countryColumn: Land, defaultCountry: NL}}]}}
`;
  async function mapped(values: Record<string, CellValue>): Promise<unknown> {
    const compiled = await compileMapping(parseMapping(mapping, '/maps/m.yaml'), { file: '/maps/m.yaml' });
    expect(compiled.columns).toContain('Land');
    const row: SourceRow = {
      kind: 'row',
      source: 'in.csv',
      row: 1,
      values: { id: '1', name: 'Bakker', ...values },
      location: { file: '/data/in.csv', row: 2 },
    };
    const item = compiled.mapRow(row);
    return item.kind === 'record' ? item.record.phoneNumbers : item;
  }

  it("reads a national number as its row's country", async () => {
    expect(await mapped({ tel: '020 123 4567', Land: 'Nederland' })).toEqual([{ number: '+31201234567' }]);
    expect(await mapped({ tel: '02 123 45 67', Land: 'België' })).toEqual([{ number: '+3221234567' }]);
    expect(await mapped({ tel: '030 1234567', Land: 'Deutschland' })).toEqual([{ number: '+49301234567' }]);
    expect(await mapped({ tel: '01 42 68 53 00', Land: 'FR' })).toEqual([{ number: '+33142685300' }]);
  });

  it('takes the default country where the row names none, and keeps a country code as written', async () => {
    expect(await mapped({ tel: '020 123 4567', Land: '' })).toEqual([{ number: '+31201234567' }]);
    expect(await mapped({ tel: '020 123 4567', Land: 'Narnia' })).toEqual([{ number: '+31201234567' }]);
    expect(await mapped({ tel: '+49 30 1234567', Land: 'Nederland' })).toEqual([{ number: '+49301234567' }]);
  });

  it("rejects a number not valid in its row's country, naming the column", async () => {
    const item = (await mapped({ tel: '123', Land: 'België' })) as { kind: string; message: string };
    expect(item.kind).toBe('rejected');
    expect(item.message).toContain(`valid in BE (the row's "Land")`);
  });
});
