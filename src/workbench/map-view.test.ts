import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { offlineResolver, parseMapping } from '../mapping/index.ts';
import type { MapEdit } from './api.ts';
import { applyEdit, previewRows, readSample, samplesOf, tableOf } from './map-view.ts';

const YAML = `# People of the sheet
version: 1
entity: party
key: "{{email}}"
fields:
  - to: firstName
    value: {column: "first", transform: [trim, lowercase]}  # kept as typed
  - to: custom
    definition: "Joined"
    tag: null
    value: {column: "joined", transform: [date]}
  - to: address
    type: Work
    parts:
      city: {column: "city"}
`;

const dir = mkdtempSync(join(tmpdir(), 'ferry-map-view-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('applyEdit: the table edits the YAML, keeping the rest as written', () => {
  const cases: Array<[string, MapEdit, RegExp[], RegExp[]]> = [
    ['a new target for a column no field reads', { kind: 'target', column: 'email', to: 'email' }, [/- to: email\n\s+value: \{column: email\}\n\s+type: Work/], []],
    ['another target for a mapped column', { kind: 'target', column: 'first', to: 'lastName' }, [/- to: lastName\n\s+value: \{column: "first"/], [/to: firstName/]],
    ['a custom field of the account', { kind: 'target', column: 'first', to: 'custom:Nickname' }, [/- to: custom\n\s+value: .*\n\s+definition: Nickname\n\s+tag: null/], []],
    ['a column left out', { kind: 'target', column: 'joined', to: '' }, [], [/joined/, /Joined/]],
    ['a transform with its options', { kind: 'transform', column: 'joined', transform: 'date', param: 'dd.MM.yyyy' }, [/transform: \[\{date: dd\.MM\.yyyy\}\]/], []],
    ['the last transform replaced, the ones before kept', { kind: 'transform', column: 'first', transform: 'uppercase', param: '' }, [/transform: \[trim, uppercase\]/], []],
    ['required', { kind: 'required', column: 'first', required: true }, [/required: true/], []],
    ['what a bad value does', { kind: 'onInvalid', column: 'joined', onInvalid: 'drop' }, [/onInvalid: drop/], []],
    ['rows with one key', { kind: 'onDuplicate', onDuplicate: 'merge' }, [/^onDuplicate: merge$/m], []],
    ['records found by', { kind: 'matchBy', matchBy: 'email, name' }, [/^match: \{by: \[email, name\], onMatch: update\}$/m], []],
  ];
  it.each(cases)('%s', (_what, edit, present, absent) => {
    const out = applyEdit(YAML, edit);
    for (const pattern of present) expect(out).toMatch(pattern);
    for (const pattern of absent) expect(out).not.toMatch(pattern);
    // Comments and the entries not edited stay.
    expect(out).toContain('# People of the sheet');
    expect(out).toContain('city: {column: "city"}');
    expect(() => parseMapping(out, 'm.yaml')).not.toThrow();
  });

  it('refuses to edit a column the table does not edit in its plain form, and YAML with errors', () => {
    expect(() => applyEdit(YAML, { kind: 'required', column: 'city', required: true })).toThrow(/in the plain form the table edits/);
    expect(() => applyEdit('fields: [', { kind: 'onDuplicate', onDuplicate: 'merge' })).toThrow(/fix them/);
    expect(() => applyEdit(YAML, { kind: 'transform', column: 'first', transform: 'nosuch', param: '' })).toThrow(/no transform/);
  });
});

describe('the table and the first rows', () => {
  it('lists each column with the entries that read it, and marks rejected and warned cells with their reasons', async () => {
    const input = join(dir, 'people.csv');
    writeFileSync(input, 'first,email,joined,city\nAnn,ann@example.com,2024-01-31,Oslo\nBo,bo@example.com,31.01.2024,Bergen\n');
    const sample = await readSample(input, undefined);
    const table = tableOf(parseMapping(YAML, 'm.yaml'), sample.header, samplesOf(sample));
    expect(table.columns.map((c) => [c.name, c.entries.map((e) => `${e.to}${e.editable ? '' : ' (yaml)'}`)])).toEqual([
      ['first', ['firstName']],
      ['email', []],
      ['joined', ['custom']],
      ['city', ['address (yaml)']],
    ]);
    expect(table.columns.find((c) => c.name === 'city')?.entries[0]?.summary).toBe('address, city part');
    expect(table.columns[0]?.samples).toEqual(['Ann', 'Bo']);

    const rejecting = await previewRows(parseMapping(YAML, 'm.yaml'), join(dir, 'm.yaml'), dir, sample, offlineResolver);
    expect(rejecting.map((r) => r.status)).toEqual(['ok', 'rejected']);
    expect(rejecting[1]?.marks.joined?.[0]).toMatchObject({ kind: 'rejected' });
    expect(rejecting[1]?.marks.joined?.[0]?.text).toContain('31.01.2024');

    const dropping = applyEdit(YAML, { kind: 'onInvalid', column: 'joined', onInvalid: 'drop' });
    const warned = await previewRows(parseMapping(dropping, 'm.yaml'), join(dir, 'm.yaml'), dir, sample, offlineResolver);
    expect(warned.map((r) => r.status)).toEqual(['ok', 'ok']);
    expect(warned[1]?.marks.joined?.[0]).toMatchObject({ kind: 'warning' });
    expect(warned[1]?.cells.joined).toBe('31.01.2024');
  });
});
