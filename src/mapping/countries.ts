import type { CountryCode } from 'libphonenumber-js';
import { normalizeWord } from '../util/index.ts';
import { phoneLibrary } from './transforms/phone-library.ts';

/**
 * The languages whose column names the drafts read (init.ts); a country column of a file in one
 * of them names its countries in that language (`Nederland`, `Belgique`, `Deutschland`).
 */
const LANGUAGES = ['en', 'fr', 'de', 'es', 'nl', 'it'] as const;

/**
 * Names people write that no language's standard name is: the short forms and older names an
 * export is full of. The standard names come from the runtime's own table (Intl.DisplayNames).
 */
const ALIASES: ReadonlyArray<[string, CountryCode]> = [
  ['The Netherlands', 'NL'],
  ['Holland', 'NL'],
  ['Pays-Bas', 'NL'],
  ['Holanda', 'NL'],
  ['Olanda', 'NL'],
  ['USA', 'US'],
  ['U.S.A.', 'US'],
  ['U.S.', 'US'],
  ['United States of America', 'US'],
  ['America', 'US'],
  ['Vereinigte Staaten von Amerika', 'US'],
  ['UK', 'GB'],
  ['U.K.', 'GB'],
  ['Great Britain', 'GB'],
  ['Britain', 'GB'],
  ['England', 'GB'],
  ['Scotland', 'GB'],
  ['Wales', 'GB'],
  ['Northern Ireland', 'GB'],
  ['Grossbritannien', 'GB'],
  ['Engeland', 'GB'],
  ['Angleterre', 'GB'],
  ['Inglaterra', 'GB'],
  ['Czech Republic', 'CZ'],
  ['Tschechische Republik', 'CZ'],
  ['Republic of Ireland', 'IE'],
  ['Eire', 'IE'],
  ['BRD', 'DE'],
  ['Bundesrepublik Deutschland', 'DE'],
  ['Suisse', 'CH'],
  ['Schweiz', 'CH'],
  ['Svizzera', 'CH'],
  ['Zwitserland', 'CH'],
  ['Österreich', 'AT'],
  ['Belgie', 'BE'],
  ['Belgien', 'BE'],
  ['Luxemburg', 'LU'],
  ['South Korea', 'KR'],
  ['Korea', 'KR'],
  ['Russia', 'RU'],
  ['Turkey', 'TR'],
  ['Turquie', 'TR'],
  ['Türkei', 'TR'],
  ['Turkije', 'TR'],
  ['Turquía', 'TR'],
  ['Ivory Coast', 'CI'],
  ['Macedonia', 'MK'],
  ['Burma', 'MM'],
  ['Swaziland', 'SZ'],
  ['Cape Verde', 'CV'],
  ['Vatican', 'VA'],
  ['UAE', 'AE'],
  ['Emirates', 'AE'],
];

let table: Map<string, CountryCode> | undefined;

/**
 * Every name of every country phone numbers are known for, normalised as column names are (no
 * case, accents, spaces or punctuation): its ISO code (NL), its three-letter code where the
 * runtime knows it, its name in each of the drafts' languages, and the aliases above.
 */
function countryTable(): Map<string, CountryCode> {
  if (table !== undefined) return table;
  table = new Map();
  const countries = phoneLibrary().getCountries();
  const namers = LANGUAGES.map((language) => new Intl.DisplayNames([language], { type: 'region', fallback: 'none' }));
  for (const code of countries) {
    table.set(normalizeWord(code), code);
    for (const namer of namers) {
      const name = namer.of(code);
      if (name !== undefined && name !== code) table.set(normalizeWord(name), code);
    }
  }
  for (const [name, code] of ALIASES) table.set(normalizeWord(name), code);
  return table;
}

/**
 * The ISO 3166 code of a country as a row writes it (`Nederland`, `België`, `NL`, `Deutschland`,
 * `UK`), or undefined for text that names no country the phone numbering plans know.
 */
export function countryCodeOf(text: string): CountryCode | undefined {
  const word = normalizeWord(text);
  if (word === '') return undefined;
  return countryTable().get(word);
}

/** A country's English name for a comment or a message: `Netherlands (NL)`. */
export function countryName(code: CountryCode): string {
  return `${new Intl.DisplayNames(['en'], { type: 'region' }).of(code) ?? code} (${code})`;
}

/**
 * Country-code top-level domains and the country whose numbers their addresses suggest: an
 * e-mail address at `bakker.nl` is evidence the file's numbers are Dutch. `.uk` is GB's.
 */
export function countryOfDomain(address: string): CountryCode | undefined {
  const host =
    address
      .slice(address.lastIndexOf('@') + 1)
      .replace(/^[a-z]+:\/\//i, '')
      .split(/[/?#:]/)[0] ?? '';
  const tld = host.toLowerCase().split('.').at(-1) ?? '';
  if (tld.length !== 2) return undefined;
  const code = (tld === 'uk' ? 'GB' : tld.toUpperCase()) as CountryCode;
  return phoneLibrary().isSupportedCountry(code) ? code : undefined;
}
