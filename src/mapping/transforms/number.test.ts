import { describe, expect, it } from 'vitest';
import { integer, number } from './number.ts';
import { build, optionsError, transformErrorOf, UTC } from '../../../test/helpers/transforms.ts';
import type { Value } from './types.ts';

const NNBSP = '\u202F';
const NBSP = '\u00A0';

describe('number', () => {
  it.each<[options: unknown, input: Value, output: Value]>([
    [{}, '1234.56', 1234.56],
    [{}, '0.1', 0.1],
    [{}, '0.3', 0.3],
    [{}, '1.005', 1.005],
    [{}, '-12', -12],
    [{}, '+12', 12],
    [{}, '\u221212', -12],
    [{}, '12-', -12],
    [{}, '(12.50)', -12.5],
    [{}, '( 12.50 )', -12.5],
    [{}, '.5', 0.5],
    [{}, '12.', 12],
    [{}, '-0', 0],
    [{}, '1.5e3', 1500],
    [{}, '2E-2', 0.02],
    [{}, '  42  ', 42],
    [{}, '€12.50', 12.5],
    [{}, '12.50 €', 12.5],
    [{}, '$ 1234', 1234],
    [{}, '-$12', -12],
    [{}, '($12)', -12],
    [{}, 'EUR 99.90', 99.9],
    [{}, '99.90 USD', 99.9],
    [{}, '£0.99', 0.99],
    [{}, '', null],
    [{}, '   ', null],
    [{}, null, null],
    [{}, 17.25, 17.25],
    [{ locale: 'de-DE' }, '1.234,56', 1234.56],
    [{ locale: 'de-DE' }, '1.234.567,5', 1234567.5],
    [{ locale: 'de-DE' }, '1234,56', 1234.56],
    [{ locale: 'de-DE' }, '-1.234 €', -1234],
    [{ locale: 'de-DE' }, '0,1', 0.1],
    [{ locale: 'en-US' }, '1,234.56', 1234.56],
    [{ locale: 'en-US' }, '1,234,567', 1234567],
    [{ locale: 'en-US' }, '(1,250.00)', -1250],
    [{ locale: 'fr-FR' }, `1${NNBSP}234,56`, 1234.56],
    [{ locale: 'fr-FR' }, `1${NBSP}234${NBSP}567,5${NBSP}€`, 1234567.5],
    [{ locale: 'fr-FR' }, '1 234,56', 1234.56],
    [{ locale: 'de-CH' }, '1’234.50', 1234.5],
    [{ locale: 'de-CH' }, "1'234.50", 1234.5],
    [{ decimal: ',' }, '1234,5', 1234.5],
    [{ decimal: ',', thousands: '.' }, '1.234,5', 1234.5],
    [{ decimal: '.', thousands: ',' }, '1,234.5', 1234.5],
    [{ thousands: ' ' }, `12${NNBSP}345.6`, 12345.6],
    [{ locale: 'de-DE', decimal: '.', thousands: ',' }, '1,234.5', 1234.5],
  ])('%j: %j -> %j', async (options, input, output) => {
    const fn = await build(number, options);
    expect(fn(input, UTC)).toBe(output);
  });

  it.each<[options: unknown, input: Value, message: string]>([
    [{}, 'abc', 'expected a number like 1234.56, got "abc"'],
    [
      {},
      '1,234.56',
      'expected a number like 1234.56, got "1,234.56"; en-US reads it as 1234.56 (write {number: en-US})',
    ],
    [{}, '1 234', 'expected a number like 1234.56, got "1 234"; fr-FR reads it as 1234 (write {number: fr-FR})'],
    [{}, '12.5.1', 'expected a number like 1234.56, got "12.5.1"'],
    [{}, '--12', 'expected a number like 1234.56, got "--12"'],
    [{}, '-(12)', 'expected a number like 1234.56, got "-(12)"'],
    [{}, '(12)-', 'expected a number like 1234.56, got "(12)-"'],
    [{}, '12%', 'expected a number like 1234.56, got "12%"'],
    [{}, '1e999', 'expected a number like 1234.56, got "1e999"'],
    [{}, true, 'expected a number like 1234.56, got the boolean true'],
    [{}, Number.NaN, 'expected a number like 1234.56, got NaN'],
    [{}, new Date(Date.UTC(2024, 0, 1)), 'expected a number like 1234.56, got the date 2024-01-01'],
    [
      {},
      ['1', '2'],
      'expected a number like 1234.56, got a list of 2 values (pick one with `first` or `nth`, or combine them with `join`)',
    ],
    [
      { locale: 'de-DE' },
      '1.5',
      'expected a number like 1.234,56 (de-DE), got "1.5"; en-US reads it as 1.5 (write {number: en-US})',
    ],
    [
      { locale: 'de-DE' },
      '1,234.56',
      'expected a number like 1.234,56 (de-DE), got "1,234.56"; en-US reads it as 1234.56 (write {number: en-US})',
    ],
    [
      { locale: 'en-US' },
      '1,23',
      'expected a number like 1,234.56 (en-US), got "1,23"; de-DE reads it as 1.23 (write {number: de-DE})',
    ],
    [
      { locale: 'en-US' },
      '448.609,91',
      'expected a number like 1,234.56 (en-US), got "448.609,91"; de-DE reads it as 448609.91 (write {number: de-DE})',
    ],
    [
      { locale: 'fr-FR' },
      '1.234,56',
      'expected a number like 1 234,56 (fr-FR), got "1.234,56"; de-DE reads it as 1234.56 (write {number: de-DE})',
    ],
    [{ decimal: ',', thousands: '.' }, 'x', 'expected a number like 1.234,56 (thousands ".", decimal ","), got "x"'],
  ])('%j rejects %j', async (options, input, message) => {
    const fn = await build(number, options);
    const error = transformErrorOf(fn, input);
    expect(error.message).toBe(message);
    expect(error.transform).toBe('number');
  });

  it.each([
    [
      { locale: 'xx-invalid-' },
      '"xx-invalid-" is not a locale this system knows (a BCP 47 tag such as de-DE or en-US)',
    ],
    [{ decimal: ',', thousands: ',' }, 'the decimal and thousands separators are both ","'],
    [{ locale: 'de-DE', decimal: '.' }, 'the decimal and thousands separators are both "."'],
    [{ decimal: ';' }, 'Invalid option: expected one of "."|","'],
    [{ thousands: '_' }, 'Invalid option: expected one of ""|"."|","|" "|"\u00A0"|"\u202F"|"\'"|"’"'],
  ])('rejects the options %j', (options, message) => {
    expect(optionsError(number, options)).toBe(message);
  });
});

describe('integer', () => {
  it.each<[options: unknown, input: Value, output: Value]>([
    [{}, '12', 12],
    [{}, '12.0', 12],
    [{}, '-3', -3],
    [{}, '1.2e3', 1200],
    [{ locale: 'en-US' }, '1,200', 1200],
    [{ locale: 'de-DE' }, '1.200', 1200],
    [{}, 7, 7],
    [{}, '', null],
    [{}, null, null],
  ])('%j: %j -> %j', async (options, input, output) => {
    const fn = await build(integer, options);
    expect(fn(input, UTC)).toBe(output);
  });

  it.each<[options: unknown, input: Value, message: string]>([
    [{}, '12.5', 'expected a whole number like 1234, got "12.5"'],
    [{}, 12.5, 'expected a whole number like 1234, got 12.5'],
    [{}, '99999999999999999999', 'expected a whole number like 1234, got "99999999999999999999"'],
    [{ locale: 'de-DE' }, '1,5', 'expected a whole number like 1.234 (de-DE), got "1,5"'],
    [{}, 'twelve', 'expected a whole number like 1234, got "twelve"'],
  ])('%j rejects %j', async (options, input, message) => {
    const fn = await build(integer, options);
    const error = transformErrorOf(fn, input);
    expect(error.message).toBe(message);
    expect(error.transform).toBe('integer');
  });
});
