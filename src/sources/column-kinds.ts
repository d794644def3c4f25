/**
 * What a column's name says it holds, shared by `inspect` (which checks such columns) and
 * `mapping init` (which maps them): the reader of a file and the drafter of its mapping agree on
 * which column is the key.
 */
import { normalizeWord } from '../util/index.ts';

/**
 * Whether a column holds ids: "ID", "Customer ID", "Kundennummer", "Réf client", "Référence",
 * "Nr", "Número de cliente", "Codice cliente", "Klantnummer". Phone, tax and postal numbers are not.
 */
export function isIdColumn(column: string): boolean {
  const plain = normalizeWord(column);
  if (/phone|fax|mobile|tel|vat|tax|zip|post|iban|siret|siren|currency/.test(plain)) return false;
  return (
    plain === 'id' ||
    plain === 'key' ||
    /(^|[a-z])ids(primary|secondary)?$/.test(plain) ||
    /(^|[a-z])(id|nr|no|number|nummer)$/.test(plain) ||
    /^(ref|reference|referenz|referencia|riferimento)/.test(plain) ||
    /^(kundennummer|klantnummer|numero|codice|code)/.test(plain)
  );
}

/** Whether a column's name says e-mail ("Email", "E-Mail-Adresse", "Courriel", "Correo"); its values decide the rest. */
export function isEmailColumn(column: string): boolean {
  return /e?mail|courriel|correo/.test(normalizeWord(column));
}
