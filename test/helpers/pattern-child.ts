/**
 * Child of linear-pattern.test.ts: maps one long cell through every place a mapping takes a
 * regular expression, with each catastrophic pattern, and prints one line per case as it finishes
 * (`<case> <CPU ms>`). Run in its own process so that a pattern that backtracks for ever can be killed
 * by the test instead of freezing it.
 */
import { compileMapping } from '../../src/mapping/compile.ts';
import { parseMapping } from '../../src/mapping/load.ts';

const [patternsJson, lengthText] = process.argv.slice(2);
const patterns = JSON.parse(patternsJson as string) as string[];
const length = Number(lengthText);

/** Every site that takes a pattern; `P` is the pattern as a YAML double-quoted string. */
const SITES: Record<string, string> = {
  'replace (regex)':
    'fields:\n  - {to: lastName, value: {column: n, transform: [{replace: {pattern: P, with: "x", regex: true}}]}}\n',
  extract: 'fields:\n  - {to: lastName, value: {column: n, transform: [{extract: {pattern: P, otherwise: keep}}]}}\n',
  'when.matches':
    'fields:\n  - {to: lastName, value: x}\n  - {to: jobTitle, value: {const: y, when: {column: n, matches: P}}}\n',
  'when.matches with empty':
    'fields:\n  - {to: lastName, value: x}\n  - {to: jobTitle, value: {const: y, when: {column: n, matches: P, empty: false}}}\n',
  'skip.matches': 'skip: {not: {column: n, matches: P}}\nfields:\n  - {to: lastName, value: x}\n',
};

for (const pattern of patterns) {
  // A long run of the repeated letter with one that spoils the match at the end.
  const cell = `${'a'.repeat(length)}!`;
  for (const [site, body] of Object.entries(SITES)) {
    const text = `version: 1\nentity: party\nkey: "{{id}}"\n${body.replace('P', JSON.stringify(pattern))}`;
    const compiled = await compileMapping(parseMapping(text, '/maps/m.yaml'), { file: '/maps/m.yaml' });
    // CPU time, not the clock's: a busy machine (other tests, other builds) does not make a case slow.
    const start = process.cpuUsage();
    compiled.mapRow({
      kind: 'row',
      source: 'in.csv',
      row: 1,
      values: { id: '1', n: cell },
      location: { file: '/data/in.csv', row: 2 },
    });
    process.stdout.write(`${JSON.stringify({ pattern, site, ms: cpuMs(process.cpuUsage(start)) })}\n`);
  }
}

/** User and system CPU time of a `process.cpuUsage` difference, in milliseconds. */
function cpuMs(used: NodeJS.CpuUsage): number {
  return (used.user + used.system) / 1000;
}
