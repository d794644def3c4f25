import { Metadata, getCountries } from 'libphonenumber-js';
import metadataJson from 'libphonenumber-js/min/metadata';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../util/seeded-random.ts';
import { DigitProduct, compileDigitPattern, isAutomatonPattern, sampleDigitPattern } from './phone-digit-automaton.ts';

/** Digits as the matchers take them: values 0-9. */
function toDigits(text: string): Uint8Array {
  return Uint8Array.from(text, (char) => char.charCodeAt(0) - 48);
}

interface PlanAccess {
  selectNumberingPlan(country: string): void;
  numberingPlan: {
    nationalNumberPattern(): string | undefined;
    leadingDigits(): string | undefined;
    type(name: string): { pattern(): string } | undefined;
  };
}

const TYPES = [
  'FIXED_LINE',
  'MOBILE',
  'PREMIUM_RATE',
  'TOLL_FREE',
  'SHARED_COST',
  'VOIP',
  'PERSONAL_NUMBER',
  'PAGER',
  'UAN',
  'VOICEMAIL',
];

/** Every pattern the fast path compiles: national, number types and leading digits of every country. */
function metadataPatterns(): string[] {
  const metadata = new (Metadata as unknown as new (json: unknown) => PlanAccess)(metadataJson);
  const out = new Set<string>();
  for (const country of getCountries()) {
    metadata.selectNumberingPlan(country);
    const plan = metadata.numberingPlan;
    const national = plan.nationalNumberPattern();
    if (national) out.add(national);
    const leading = plan.leadingDigits();
    if (leading) out.add(leading);
    for (const name of TYPES) {
      const pattern = plan.type(name)?.pattern();
      if (pattern) out.add(pattern);
    }
  }
  return [...out];
}

describe('compileDigitPattern', () => {
  it.each([
    ['[1-357-9]\\d{9}|[18]\\d{8}|8\\d{6}', '2079460000', true],
    ['[1-357-9]\\d{9}|[18]\\d{8}|8\\d{6}', '0079460000', false],
    ['[1-357-9]\\d{9}|[18]\\d{8}|8\\d{6}', '8123456', true],
    ['[1-357-9]\\d{9}|[18]\\d{8}|8\\d{6}', '81234567', false],
    ['8\\d{6}(?:\\d{2})?', '812345678', true],
    ['8\\d{6}(?:\\d{2})?', '81234567', false],
    ['(?:1481|[357-9]\\d{3})\\d{6}', '1481123456', true],
    ['1\\d{2,4}', '1', false],
    ['1\\d{2,4}', '123', true],
    ['1\\d{2,4}', '123456', false],
    ['9\\d{2,}', '9000000000', true],
    ['(?:)?1', '1', true],
    ['', '', true],
    ['', '1', false],
  ])('%s matches %s whole: %s', (source, digits, expected) => {
    const pattern = compileDigitPattern(source);
    expect(isAutomatonPattern(pattern)).toBe(true);
    expect(pattern.matches(toDigits(digits), 0, digits.length)).toBe(expected);
    expect(new RegExp(`^(?:${source})$`).test(digits)).toBe(expected);
  });

  it.each([
    ['74576|(?:16|7[56])24', '7624123456', true],
    ['74576|(?:16|7[56])24', '7457600000', true],
    ['74576|(?:16|7[56])24', '7457', false],
    ['74576|(?:16|7[56])24', '9624123456', false],
  ])('%s matches the start of %s: %s', (source, digits, expected) => {
    expect(compileDigitPattern(source).matchesStart(toDigits(digits), 0, digits.length)).toBe(expected);
    expect(digits.search(new RegExp(source)) === 0).toBe(expected);
  });

  it.each(['1$', '[^1]2', '(?=1)1', '\\s1', 'a', '(1)\\1', '1+?'])(
    'keeps a RegExp for %s, outside the digit grammar',
    (source) => {
      const pattern = compileDigitPattern(source);
      expect(isAutomatonPattern(pattern)).toBe(false);
      // The RegExp it keeps still answers, with its usual anchoring.
      expect(pattern.matches(toDigits('11'), 0, 2)).toBe(new RegExp(`^(?:${source})$`).test('11'));
    },
  );

  it('answers like the RegExp for every metadata pattern on sampled, mutated and random digit strings', () => {
    const random = seededRandom(11);
    const patterns = metadataPatterns();
    let outsideGrammar = 0;
    let checked = 0;
    const differences: string[] = [];
    for (const source of patterns) {
      const pattern = compileDigitPattern(source);
      if (!isAutomatonPattern(pattern)) outsideGrammar++;
      const whole = new RegExp(`^(?:${source})$`);
      const start = new RegExp(source);
      const inputs: string[] = [];
      for (let i = 0; i < 12; i++) {
        const sample = sampleDigitPattern(source, random) ?? '';
        inputs.push(sample, `${sample}${Math.floor(random() * 10)}`, sample.slice(0, -1));
        if (sample.length > 0) {
          const at = Math.floor(random() * sample.length);
          inputs.push(`${sample.slice(0, at)}${Math.floor(random() * 10)}${sample.slice(at + 1)}`);
        }
      }
      for (let i = 0; i < 6; i++) {
        let text = '';
        const length = 1 + Math.floor(random() * 17);
        for (let j = 0; j < length; j++) text += String(Math.floor(random() * 10));
        inputs.push(text);
      }
      for (const input of inputs) {
        checked++;
        // Placed inside a larger buffer, so a matcher that ignores from/to gets caught.
        const buffer = toDigits(`98${input}76`);
        const to = 2 + input.length;
        if (pattern.matches(buffer, 2, to) !== whole.test(input))
          differences.push(`whole ${input} in ${source.slice(0, 60)}`);
        if (pattern.matchesStart(buffer, 2, to) !== (input.search(start) === 0))
          differences.push(`start ${input} in ${source.slice(0, 60)}`);
      }
    }
    expect(differences.slice(0, 10)).toEqual([]);
    // Every metadata pattern is in the grammar today; a library update that changes that should be noticed.
    expect(outsideGrammar).toBe(0);
    expect(patterns.length).toBeGreaterThan(300);
    expect(checked).toBeGreaterThan(15_000);
  });
});

describe('DigitProduct', () => {
  // Whole and start parts mixed, one part outside the grammar in the second product.
  const sources = [
    '[1-357-9]\\d{9}|[18]\\d{8}',
    '7\\d{9}',
    '74576|(?:16|7[56])24',
    '1534\\d{6}|(?:[3578]\\d|90)\\d{8}',
  ];
  const starts = [false, false, true, false];
  const decide = (matched: (part: number) => boolean): number => {
    let mask = 0;
    for (let part = 0; part < sources.length; part++) if (matched(part)) mask |= 1 << part;
    return mask;
  };
  const expectedMask = (text: string): number => {
    let mask = 0;
    sources.forEach((source, part) => {
      const hit = starts[part] ? text.search(new RegExp(source)) === 0 : new RegExp(`^(?:${source})$`).test(text);
      if (hit) mask |= 1 << part;
    });
    return mask;
  };

  it.each([
    ['automata only', sources],
    ['one part kept as a RegExp', [...sources.slice(0, 3), '(?=1)1534\\d{6}|(?:[3578]\\d|90)\\d{8}']],
  ])('answers for every part as walking each alone would (%s)', (_name, partSources) => {
    const product = new DigitProduct(
      partSources.map((source, part) => ({ pattern: compileDigitPattern(source), start: starts[part] as boolean })),
      decide,
    );
    const random = seededRandom(5);
    const differences: string[] = [];
    const seen = new Set<number>();
    for (let i = 0; i < 3_000; i++) {
      // Starts that some part accepts, so matches are common, then random digits of any length.
      const start = ['7624', '7457', '1534', '2', '7', '90', '8', ''][i % 8] as string;
      let text = start;
      const length = Math.floor(random() * 12);
      for (let j = 0; j < length; j++) text += String(Math.floor(random() * 10));
      const expected = expectedMask(text);
      seen.add(expected);
      const got = product.verdict(toDigits(`5${text}5`), 1, 1 + text.length);
      if (got !== expected) differences.push(`${text}: ${got} instead of ${expected}`);
    }
    expect(differences.slice(0, 10)).toEqual([]);
    // Several combinations of parts matched at once were compared, not only "none".
    expect(seen.size).toBeGreaterThan(4);
  });
});
