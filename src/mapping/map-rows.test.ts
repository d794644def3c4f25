import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readCsv } from '../sources/csv/csv.ts';
import { sourceFieldBatches } from '../sources/types.ts';
import { compileMapping } from './compile.ts';
import { parseMapping } from './load.ts';
import { mapRows } from './map-rows.ts';
import type { MappedItem } from './types.ts';

const dir = mkdtempSync(join(tmpdir(), 'ferry-map-rows-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MAPPING = `version: 1
entity: party
key: [Id, Region]
skip: {column: Status, equals: deleted}
fields:
  - {to: firstName, value: {column: First, transform: [trim]}}
  - {to: lastName, value: {column: Last}, required: true}
  - {to: email, type: Work, value: {column: Mail, transform: [email]}}
  - {to: tags, value: {column: Tags, transform: [{split: ";"}]}}
  - {to: about, value: {template: "{{First}} from {{Region}}", when: {column: Region, empty: false}}}
  - {to: custom, definition: Since, tag: null, value: {column: Since, transform: [date]}}
`;

/** Rows of every kind: good ones, rejects, skips, a row without a key and a broken record. */
function csv(): string {
  const lines = ['Id,Region,Status,First,Last,Mail,Tags,Since'];
  for (let i = 1; i <= 3000; i++) {
    const mail = i % 97 === 0 ? 'not an address' : `person${i}@example.com`;
    const last = i % 101 === 0 ? '' : `Last ${i}`;
    const status = i % 89 === 0 ? 'deleted' : 'active';
    const id = i % 103 === 0 ? '' : String(i);
    const region = i % 103 === 0 || i % 7 === 0 ? '' : 'North';
    lines.push(
      i === 1500
        ? `${i},North,active,a,b,c,d,e,f,g`
        : `${id},${region},${status}, First ${i} ,${last},${mail},a;b;A,2024-0${1 + (i % 9)}-1${i % 10}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

describe('mapRows over CSV rows read by position', () => {
  it('maps exactly as mapping each named row does, rejects keeping the row as read', async () => {
    const file = join(dir, 'people.csv');
    writeFileSync(file, csv());
    const compiled = await compileMapping(parseMapping(MAPPING, join(dir, 'm.yaml')), { file: join(dir, 'm.yaml') });
    expect(sourceFieldBatches(readCsv(file))).toBeTypeOf('function');

    const byPosition: MappedItem[] = [];
    for await (const item of mapRows(readCsv(file), compiled)) byPosition.push(item);
    // The same rows by name, one at a time: the path every other source takes.
    const byName: MappedItem[] = [];
    for await (const item of readCsv(file)) {
      if (item.kind === 'row') byName.push(compiled.mapRow(item));
      else
        byName.push(
          (
            await mapRows(
              (async function* () {
                yield item;
              })(),
              compiled,
            ).next()
          ).value as MappedItem,
        );
    }
    // A record gives back its row as read when asked: compared as the values it gives.
    const given = (items: MappedItem[]) =>
      items.map((item) => (item.kind === 'record' ? { ...item, valuesOf: item.valuesOf() } : item));
    expect(given(byPosition)).toEqual(given(byName));
    expect(byPosition).toHaveLength(3000);
    const record = byPosition.find((item) => item.kind === 'record');
    expect(record?.kind === 'record' && record.valuesOf()).toMatchObject({
      Id: record?.kind === 'record' ? record.key.split('|')[0] : '',
    });
    const kinds = new Set(
      byPosition.map((item) => (item.kind === 'rejected' ? `${item.kind}:${item.field || item.code}` : item.kind)),
    );
    expect(kinds).toEqual(
      new Set([
        'record',
        'skipped',
        'rejected:email',
        'rejected:lastName',
        'rejected:key',
        'rejected:SOURCE_COLUMN_COUNT',
      ]),
    );
    const reject = byPosition.find((item) => item.kind === 'rejected' && item.field === 'email');
    expect(reject).toMatchObject({
      key: '97|North',
      values: { Id: '97', Region: 'North', Mail: 'not an address', Last: 'Last 97' },
    });
  });
});
