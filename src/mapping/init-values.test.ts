import { describe, expect, it } from 'vitest';
import { proposeBoolean, proposeDate, proposeNumber, proposePhone, proposeSplit } from './init-values.ts';

describe('what mapping init reads from sample values', () => {
  it.each([
    [['21/07/1951', '03/11/1978'], '{date: "dd/MM/yyyy"}', /"21\/07\/1951" has a number over 12 first/],
    [['07/21/1971', '11/30/1984'], '{date: "MM/dd/yyyy"}', /"07\/21\/1971" has a number over 12 second/],
    [['14.03.1972', '1.12.1985'], '{date: "d.M.yyyy"}', /day comes before the month/],
    [['3/2/2019', '4/5/2020'], '{date: "d/M/yyyy"}', /cannot be told apart: day first assumed, check/],
    [['2023-01-15', ''], 'date', /YYYY-MM-DD/],
    [['2020-11-03 14:30'], '{date: "yyyy-MM-dd HH:mm"}', /a date and a time/],
    // The legacy v1 export and APIs: a `T`, a zone. `yyyy-MM-dd HH:mm` would reject every one.
    [['2012-03-01T00:00:00Z', '2012-03-31T00:00:00Z'], 'date', /ISO 8601 dates with a time \("2012-03-01T00:00:00Z"\)/],
    [['2020-11-03T14:30', '2020-11-04T09:15:00.123+02:00'], 'date', /ISO 8601/],
  ])('dates %j: %s', (values, transform, why) => {
    const proposal = proposeDate(values);
    expect(proposal?.transform).toBe(transform);
    expect(proposal?.why).toMatch(why);
  });

  it('an undecided order follows a hint (North American numbers)', () => {
    expect(proposeDate(['3/2/2019'], { monthFirst: 'the phone numbers are North American' })?.transform).toBe(
      '{date: "M/d/yyyy"}',
    );
  });

  it.each([[['21/07/1951', '07/21/1951']], [['31/31/2020']], [['2020-01-01', '01/02/2020']], [['soon']]])(
    'no date format for %j',
    (values) => {
      expect(proposeDate(values)).toBeUndefined();
    },
  );

  it.each([
    [
      ['448.609,91', '12.500,00', '0,00'],
      '{number: de-DE}',
      /"448.609,91": "." groups thousands and "," comes before the decimals, as de-DE/,
    ],
    [['1,234,567.89', '0.00'], '{number: en-US}', /as en-US writes numbers/],
    [['1 250 000,50'], '{number: fr-FR}', /as fr-FR/],
    [["1'250.50"], '{number: de-CH}', /as de-CH/],
    [['12,50'], '{number: de-DE}', /"," comes before the decimals/],
    [['12', '7'], 'number', /plain numbers/],
  ])('numbers %j: %s', (values, transform, why) => {
    const proposal = proposeNumber(values);
    expect(proposal?.transform).toBe(transform);
    expect(proposal?.why).toMatch(why);
  });

  it.each([[['1.234']], [['1,234.5', '1.234,5']], [['n/a']], [['02134', '10118']]])(
    'no number locale for %j',
    (values) => {
      expect(proposeNumber(values)).toBeUndefined();
    },
  );

  it.each([
    [['01 42 68 53 00', '06 12 34 56 78'], '{phone: FR}'],
    [['030 12345678', '0171 2345678'], '{phone: DE}'],
    [['(212) 664-7665', '(415) 867-5309'], '{phone: US}'],
    [['020 7946 0018'], '{phone: GB}'],
    [['+49 30 1234567', '+33 1 42 68 53 00'], 'phone'],
  ])('phones %j: %s', (values, transform) => {
    expect(proposePhone(values)?.transform).toBe(transform);
  });

  it('numbers of several countries get no country', () => {
    expect(proposePhone(['020 7946 0018', '06 12 34 56 78'])).toBeUndefined();
  });

  it.each([
    [['Yes', 'No', ''], 'boolean'],
    [['ja', 'nein', 'Ja'], '{boolean: {true: ["ja"], false: ["nein", ""]}}'],
    [['oui', 'non'], '{boolean: {true: ["oui"], false: ["non", ""]}}'],
  ])('yes/no %j: %s', (values, transform) => {
    expect(proposeBoolean(values)?.transform).toBe(transform);
  });

  it('a word that is neither yes nor no is no boolean', () => {
    expect(proposeBoolean(['yes', 'maybe'])).toBeUndefined();
  });

  it.each([
    [['client, VIP', 'prospect'], '{split: ","}'],
    [['customer;vip'], '{split: ";"}'],
    [['a|b'], '{split: "|"}'],
    [['single'], '{split: ","}'],
  ])('lists %j: %s', (values, transform) => {
    expect(proposeSplit(values).transform).toBe(transform);
  });
});
