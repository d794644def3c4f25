import { describe, expect, it } from 'vitest';
import type { CellValue, SourceRow } from '../sources/types.ts';
import { compileMapping, type CompiledMapping } from './compile.ts';
import { parseMapping } from './load.ts';
import { reasonText } from './reasons.ts';
import type { MappedItem, RejectedRow } from './types.ts';

async function compile(body: string, key = '"{{id}}"'): Promise<CompiledMapping> {
  const text = `version: 1\nentity: party\nkey: ${key}\n${body}`;
  return compileMapping(parseMapping(text, '/maps/m.yaml'), { file: '/maps/m.yaml' });
}

function map(compiled: CompiledMapping, values: Record<string, CellValue>): MappedItem {
  const row: SourceRow = {
    kind: 'row',
    source: 'in.csv',
    row: 6,
    values: { id: '1', ...values },
    location: { file: '/data/in.csv', row: 7 },
  };
  return compiled.mapRow(row);
}

function rejected(item: MappedItem): RejectedRow {
  if (item.kind !== 'rejected') throw new Error(`expected a rejected row, got ${JSON.stringify(item)}`);
  return item;
}

describe("reasonText: the column, the value and what is wrong, in the data owner's words", () => {
  it.each([
    [
      'an e-mail address',
      'fields:\n  - {to: lastName, value: {column: Nom}}\n  - {to: email, value: {column: E-mail, transform: [trim, email]}}\n',
      { Nom: 'Roux', 'E-mail': ' anne@@example ' },
      'E-mail "anne@@example" is not an e-mail address',
      'fields[1].value.transform[1]',
    ],
    [
      'a date in its format',
      'fields:\n  - {to: lastName, value: {column: Nom}}\n  - {to: custom, definition: Birthday, tag: null, value: {column: Date de naissance, transform: [{date: dd/MM/yyyy}]}}\n',
      { Nom: 'Roux', 'Date de naissance': '31/02/1980' },
      'Date de naissance "31/02/1980" is not a date (dd/MM/yyyy)',
      'fields[1].value.transform[0]',
    ],
    [
      'a target with set values',
      'fields:\n  - {to: lastName, value: {column: Nom}}\n  - {to: type, value: {column: Art}}\n',
      { Nom: 'Roux', Art: 'Roboter' },
      'Art "Roboter" is not person or organisation',
      'fields[1]',
    ],
    [
      'a required value',
      'fields:\n  - {to: lastName, value: {column: Nachname}, required: true}\n',
      { Nachname: '' },
      'Nachname is empty, and the mapping needs a value there',
      'fields[0]',
    ],
    [
      'a numbered item',
      'fields:\n  - {to: lastName, value: {column: Nom}}\n  - {to: phone, items: numbered, value: {column: "phone.*.number", transform: [{phone: GB}]}}\n',
      { Nom: 'Roux', 'phone.1.number': '020 7946 0000', 'phone.2.number': 'ring reception' },
      'phone.2.number "ring reception" is not a phone number (of GB, or with a country code)',
      'fields[1].value.transform[0]',
    ],
  ])('%s', async (_name, body, values, sentence, rule) => {
    const item = rejected(map(await compile(body), values));
    expect(reasonText(item)).toBe(sentence);
    expect(item.rule).toBe(rule);
    // The mapping's internals stay in the rule's column, out of the sentence.
    expect(reasonText(item)).not.toMatch(/fields\[|transform\[/);
  });

  it('says a value left out under onInvalid: drop, and what became of it', async () => {
    const item = map(
      await compile(
        'fields:\n  - {to: lastName, value: {column: Nom}}\n  - {to: email, value: {column: E-mail, transform: [email]}, onInvalid: drop}\n',
      ),
      { Nom: 'Roux', 'E-mail': 'anne@@example' },
    );
    if (item.kind !== 'record') throw new Error('expected a record');
    const [warning] = item.warnings ?? [];
    expect(warning).toMatchObject({
      code: 'VALUE_DROPPED',
      column: 'E-mail',
      value: 'anne@@example',
      rule: 'fields[1].value.transform[0]',
    });
    expect(reasonText(warning as NonNullable<typeof warning>)).toBe(
      'E-mail "anne@@example" is not an e-mail address: left out of the record',
    );
  });

  it('names the key columns of a row without a key', async () => {
    const item = rejected(
      map(await compile('fields:\n  - {to: lastName, value: {column: Nom}}\n', '"{{Kundennummer}}"'), {
        Kundennummer: ' ',
        Nom: 'Roux',
      }),
    );
    expect(reasonText(item)).toBe('Kundennummer is empty, and the row needs it as its key');
  });

  it('says a reason without a column plainly: no place in the mapping, no backticks', () => {
    expect(
      reasonText({ code: 'MAPPING_VALUE', field: 'lastName', message: 'a person needs a `firstName` or a `lastName`' }),
    ).toBe('A person needs a firstName or a lastName');
    expect(
      reasonText({
        code: 'API_VALIDATION',
        field: 'emailAddresses',
        message: 'the service refused the record: emailAddresses[0].address is not valid',
      }),
    ).toBe('The service refused the record: emailAddresses[0].address is not valid');
    expect(
      reasonText({
        code: 'LINK_UNRESOLVED',
        field: 'organisation',
        column: 'Firma ID',
        value: 'C-9',
        message: "left without organisation: links to 'C-9' in step orgs, which was not written",
      }),
    ).toBe(
      'Firma ID "C-9": links to it in step orgs, which was not written; the record is written without organisation',
    );
  });
});
