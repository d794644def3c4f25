/**
 * Texts a spreadsheet would take for a formula (OWASP "CSV injection"), and the full-width forms
 * of = + - @ that Apple Numbers folds into them.
 */
export function looksLikeFormula(text: string): boolean {
  // One look at the first character: a regular expression cost more than the rest of the cell.
  switch (text.charCodeAt(0)) {
    case 0x3d: // =
    case 0x2b: // +
    case 0x2d: // -
    case 0x40: // @
    case 0x09: // tab
    case 0x0d: // carriage return
    case 0xff1d:
    case 0xff0b:
    case 0xff0d:
    case 0xff20:
      return true;
    default:
      return false;
  }
}

/**
 * The text as a spreadsheet should show it: one that would be taken for a formula gets a leading
 * apostrophe, which makes the cell text. For every CSV crm-ferry writes for people to open
 * (exports, results, verify's differences and not-carried, warnings); not for the rejects file,
 * which is meant to be fixed and read back as it is.
 */
export function neutraliseFormula(text: string): string {
  return looksLikeFormula(text) ? `'${text}` : text;
}
