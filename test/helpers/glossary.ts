/**
 * Words the data owner does not read on the workbench's page: the mapping file's paths and option
 * names, the command line's flags and commands, run ids, and the service's internal names. The
 * browser tests walk each view and look for them in the page's text; the unit test of the page's
 * words (src/workbench/reasons.test.ts) checks the translation against the same list.
 */
export const JARGON: ReadonlyArray<readonly [RegExp, string]> = [
  [/\b(?:fields|match|skip)(?:\[\d+\]|\.[A-Za-z]+)+/, 'a path in the mapping'],
  [/\b(?:onDuplicate|onInvalid|onUnknown|onMissing|ifEmpty)\b/, "a mapping option's name"],
  [/(?:^|[\s(`])--[a-z][\w-]+/, 'a command-line flag'],
  [/\b(?:validate|import|rollback|run) --/, 'a command line'],
  [/\bvalidate --input\b|\bcrm-ferry (?:run|validate|import|rollback)\b/, 'a command line'],
  [/\b(?:rollback-)?\d{8}T\d{6,9}Z-\d+-\d+\b/, 'a run id'],
  [/\bdata tag of (?:parties|kases|opportunities)\b|\b(?:parties|kases)\b/, "the service's name of an entity"],
];

/** The jargon in a text, each with what it is and the words around it. */
export function jargonIn(text: string): string[] {
  const found: string[] = [];
  for (const [pattern, what] of JARGON) {
    const hit = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
    for (const match of text.matchAll(hit))
      found.push(`${what}: …${text.slice(Math.max(0, match.index - 30), match.index + match[0].length + 30)}…`);
  }
  return found;
}
