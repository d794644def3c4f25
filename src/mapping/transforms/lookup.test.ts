import { describe, expect, it } from 'vitest';
import { FerryError } from '../../errors/index.ts';
import { lookup } from './lookup.ts';
import { build, memoryEnvironment, optionsError, transformErrorOf, UTC } from '../../../test/helpers/transforms.ts';

const titles = { table: { Mr: 'male', Mrs: 'female', Ms: 'female', Dr: null } };

describe('lookup with an inline table', () => {
  it.each([
    [{}, 'Mr', 'male'],
    [{}, 'mrs', 'female'],
    [{}, '  MS ', 'female'],
    [{}, 'Dr', null],
    [{}, null, null],
    [{}, '', ''],
    [{}, '  ', '  '],
    [{ otherwise: 'keep' }, 'Prof', 'Prof'],
    [{ otherwise: 'empty' }, 'Prof', null],
    [{}, ['mr', 'MS'], ['male', 'female']],
    [{ otherwise: 'empty' }, ['mr', 'Prof', 'Dr'], ['male']],
    [{ otherwise: 'keep' }, ['mr', 'Prof'], ['male', 'Prof']],
  ])('%j: %j -> %j', async (extra, input, output) => {
    const fn = await build(lookup, { ...titles, ...extra });
    expect(fn(input, UTC)).toEqual(output);
  });

  it('matches case when asked to', async () => {
    const fn = await build(lookup, { table: { a: 'lower', A: 'upper' }, caseInsensitive: false });
    expect([fn('a', UTC), fn('A', UTC)]).toEqual(['lower', 'upper']);
    expect(transformErrorOf(fn, 'b').message).toBe(
      'expected a key of the lookup table, got "b" (closest keys: "a", "A")',
    );
  });

  it('looks up numbers by their text and gives non-text values as they are', async () => {
    const fn = await build(lookup, { table: { '1': 'one', '2': 2, '3': true } });
    expect([fn(1, UTC), fn('2', UTC), fn(3, UTC)]).toEqual(['one', 2, true]);
    expect(fn(['2', '3'], UTC)).toEqual(['2', 'true']);
  });

  it('names the unknown value and the three closest keys', async () => {
    const fn = await build(lookup, {
      table: { Germany: 'DE', Guernsey: 'GG', Greece: 'GR', France: 'FR', Grenada: 'GD' },
    });
    const error = transformErrorOf(fn, 'Germny');
    expect(error.message).toBe(
      'expected a key of the lookup table, got "Germny" (closest keys: "Germany", "Guernsey", "Greece")',
    );
    expect(error.transform).toBe('lookup');
  });

  it('says so when the table is empty', async () => {
    const fn = await build(lookup, { table: {} });
    expect(transformErrorOf(fn, 'x').message).toBe('expected a key of the lookup table, got "x" (the table is empty)');
  });

  it.each([
    [{}, 'give exactly one of `table` and `file`'],
    [{ table: {}, file: 'a.csv' }, 'give exactly one of `table` and `file`'],
    [
      { table: { Mr: 'male', MR: 'female' } },
      'keys "Mr" and "MR" are the same key ignoring case but give different values',
    ],
    [
      { table: { 'a ': 'x', a: 'y' }, caseInsensitive: false },
      'keys "a " and "a" are the same key but give different values',
    ],
    [{ table: { a: 'x' }, otherwise: 'drop' }, 'Invalid option: expected one of "error"|"keep"|"empty"'],
  ])('rejects the options %j', (options, message) => {
    expect(optionsError(lookup, options)).toBe(message);
  });

  it('accepts the same key twice when it gives the same value', () => {
    expect(optionsError(lookup, { table: { Mr: 'male', MR: 'male' } })).toBeUndefined();
  });
});

describe('lookup from a CSV file', () => {
  it('reads the file once, against the mapping folder, and skips the header', async () => {
    const environment = memoryEnvironment({
      '/maps/tables/countries.csv': '\uFEFFfrom,to\nDeutschland,DE\n"Vereinigtes Königreich, das",GB\n\n',
    });
    const fn = await build(lookup, { file: 'tables/countries.csv' }, environment);
    expect(fn('deutschland', UTC)).toBe('DE');
    expect(fn('Vereinigtes Königreich, das', UTC)).toBe('GB');
    expect(transformErrorOf(fn, 'from').message).toContain('got "from"');
    expect(environment.reads).toEqual(['/maps/tables/countries.csv']);
  });

  it('reads semicolon-separated files', async () => {
    const environment = memoryEnvironment({ '/maps/t.csv': 'von;nach\r\nja;yes\r\n' });
    const fn = await build(lookup, { file: 't.csv' }, environment);
    expect(fn('JA', UTC)).toBe('yes');
  });

  it('takes an absolute path as it is', async () => {
    const environment = memoryEnvironment({ '/shared/t.csv': 'a,b\nx,y\n' });
    const fn = await build(lookup, { file: '/shared/t.csv' }, environment);
    expect(fn('x', UTC)).toBe('y');
  });

  it.each([
    ['a,b\nx,y,z\n', 'the lookup file /maps/t.csv needs two columns (from, to) on every record, record 2 has 3'],
    [
      'a,b\nx,y\nX,z\n',
      'the lookup file /maps/t.csv has keys "x" and "X" that are the same key ignoring case but give different values',
    ],
    [
      'a,b\n"x,y\n',
      'the lookup file /maps/t.csv is not valid CSV: line 2: a quote opened in field 1 on line 2 is never closed',
    ],
  ])('refuses a broken file %j', async (text, message) => {
    const promise = build(lookup, { file: 't.csv' }, memoryEnvironment({ '/maps/t.csv': text }));
    await expect(promise).rejects.toThrow(FerryError);
    await expect(promise).rejects.toMatchObject({
      code: 'MAPPING_INVALID',
      message,
      location: { file: '/maps/t.csv' },
    });
  });

  it('says which file it could not read', async () => {
    const promise = build(lookup, { file: 'missing.csv' }, memoryEnvironment());
    await expect(promise).rejects.toMatchObject({
      code: 'MAPPING_INVALID',
      message: "cannot read the lookup file /maps/missing.csv: ENOENT: no such file, open '/maps/missing.csv'",
    });
  });
});

describe('lookup remembers answers per spelling', () => {
  const table = { table: { 'United Kingdom': 'GB', ' Germany ': 'DE', Nowhere: null, Same: 'Same' } };

  it.each([
    [
      {},
      ['United Kingdom', 'united kingdom', ' UNITED KINGDOM ', 'germany', ' Germany ', 'Nowhere', 'Same', 'same', ''],
      ['GB', 'GB', 'GB', 'DE', 'DE', null, 'Same', 'Same', ''],
    ],
    [{ otherwise: 'keep' }, ['Spain', 'spain', ' Spain'], ['Spain', 'spain', ' Spain']],
    [{ otherwise: 'empty' }, ['Spain', 'Germany'], [null, 'DE']],
    [{ caseInsensitive: false }, ['United Kingdom', ' Germany', 'Germany '], ['GB', 'DE', 'DE']],
  ])('%j gives the same answers the first, second and third time', async (extra, inputs, outputs) => {
    const fn = await build(lookup, { ...table, ...extra });
    for (let round = 0; round < 3; round++) expect(inputs.map((input) => fn(input, UTC))).toEqual(outputs);
  });

  it('remembers long spellings too', async () => {
    const long = 'United Kingdom of Great Britain and Northern Ireland ';
    const fn = await build(lookup, { table: { [long]: 'GB' }, otherwise: 'keep' });
    const unknown = 'x'.repeat(80);
    for (let round = 0; round < 3; round++) {
      expect([fn(long, UTC), fn(long.trim().toUpperCase(), UTC), fn(unknown, UTC)]).toEqual(['GB', 'GB', unknown]);
    }
  });

  it('tells case apart from a remembered spelling when asked to', async () => {
    const fn = await build(lookup, { ...table, caseInsensitive: false, otherwise: 'keep' });
    expect([
      fn('United Kingdom', UTC),
      fn('united kingdom', UTC),
      fn('United Kingdom', UTC),
      fn('united kingdom', UTC),
    ]).toEqual(['GB', 'united kingdom', 'GB', 'united kingdom']);
  });

  it('rejects an unknown key every time, not only the first', async () => {
    const fn = await build(lookup, table);
    const first = transformErrorOf(fn, 'Germny');
    expect(transformErrorOf(fn, 'Germny').message).toBe(first.message);
    expect(first.message).toContain('closest keys: " Germany "');
  });

  it('stays right after more distinct spellings than it keeps', async () => {
    const fn = await build(lookup, { ...table, otherwise: 'keep' });
    for (let index = 0; index < 10_050; index++) expect(fn(`city ${index}`, UTC)).toBe(`city ${index}`);
    expect([fn('UNITED KINGDOM', UTC), fn('city 3', UTC), fn('Nowhere', UTC)]).toEqual(['GB', 'city 3', null]);
  });

  it('answers a list element by element as before, also after the same texts came alone', async () => {
    const fn = await build(lookup, { ...table, otherwise: 'empty' });
    expect([fn('Nowhere', UTC), fn('Spain', UTC)]).toEqual([null, null]);
    expect(fn(['germany', 'Nowhere', 'Spain', 'united kingdom'], UTC)).toEqual(['DE', 'GB']);
  });
});
