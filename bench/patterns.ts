/**
 * Benchmark (not a test): what running a mapping's patterns on the linear-time engine (re2js, see
 * src/mapping/linear-pattern.ts) costs against the built-in backtracking engine, on the three uses
 * the bench mapping and the shipped mappings make of them: a `replace` with a class
 * (`[^a-z0-9]+` on company names), a `when.matches` test (`(^|;)\s*vip\s*(;|$)` on tags) and an
 * `extract` of a date (`^(\d{4}-\d{2}-\d{2})` on timestamps). Each over the same generated texts,
 * interleaved, best of the runs.
 *
 *   npx tsx bench/patterns.ts [--texts 200000] [--runs 5]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { compileLinearPattern } from '../src/mapping/linear-pattern.ts';
import { seededRandom } from '../src/util/seeded-random.ts';

const { values } = parseArgs({
  options: { texts: { type: 'string', default: '200000' }, runs: { type: 'string', default: '5' } },
});
const count = Number(values.texts);
const runs = Number(values.runs);
const random = seededRandom(7);
const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)] as T;

const words = [
  'acme',
  'global',
  'analytical',
  'engine',
  'works',
  'north',
  'star',
  'partners',
  'ltd',
  '& co.',
  'gmbh',
  'data',
];
const companies = Array.from({ length: count }, (_, i) => `${pick(words)} ${pick(words)} ${pick(words)} ${i}`);
const tags = Array.from({ length: count }, () =>
  [pick(['lead', 'customer', 'partner']), pick(['vip', 'newsletter', 'press', 'Vip ']), pick(['', 'event'])].join(';'),
);
const stamps = Array.from(
  { length: count },
  (_, i) =>
    `2026-${String((i % 12) + 1).padStart(2, '0')}-${String((i % 28) + 1).padStart(2, '0')}T10:${String(i % 60).padStart(2, '0')}:00Z`,
);

interface Case {
  name: string;
  native: () => number;
  linear: () => number;
}

const replaceNative = /[^a-z0-9]+/g;
const replaceLinear = compileLinearPattern('[^a-z0-9]+', 'g');
const vipNative = /(^|;)\s*vip\s*(;|$)/;
const vipLinear = compileLinearPattern('(^|;)\\s*vip\\s*(;|$)');
const dateNative = /^(\d{4}-\d{2}-\d{2})/;
const dateLinear = compileLinearPattern('^(\\d{4}-\\d{2}-\\d{2})');

const CASES: Case[] = [
  {
    name: 'replace [^a-z0-9]+ (company names)',
    native: () => companies.reduce((n, text) => n + text.replace(replaceNative, '-').length, 0),
    linear: () => companies.reduce((n, text) => n + replaceLinear.replace(text, '-').length, 0),
  },
  {
    name: 'when.matches (^|;)\\s*vip\\s*(;|$) (tags)',
    native: () => tags.reduce((n, text) => n + (vipNative.test(text) ? 1 : 0), 0),
    linear: () => tags.reduce((n, text) => n + (vipLinear.test(text) ? 1 : 0), 0),
  },
  {
    name: 'extract ^(\\d{4}-\\d{2}-\\d{2}) (timestamps)',
    native: () => stamps.reduce((n, text) => n + (dateNative.exec(text)?.[1]?.length ?? 0), 0),
    linear: () => stamps.reduce((n, text) => n + (dateLinear.exec(text)?.[1]?.length ?? 0), 0),
  },
];

function time(fn: () => number): { ms: number; result: number } {
  const start = performance.now();
  const result = fn();
  return { ms: performance.now() - start, result };
}

console.log(
  `${count.toLocaleString('en')} texts a case, best of ${runs} interleaved runs, node ${process.version}, load average ${loadavg()[0]?.toFixed(2)}\n`,
);
console.log(
  `${'case'.padEnd(46)}${'built-in'.padStart(12)}${'re2js'.padStart(12)}${'ratio'.padStart(8)}${'µs/text'.padStart(10)}`,
);
for (const { name, native, linear } of CASES) {
  let bestNative = Number.POSITIVE_INFINITY;
  let bestLinear = Number.POSITIVE_INFINITY;
  for (let run = 0; run < runs; run++) {
    const a = time(native);
    const b = time(linear);
    if (a.result !== b.result) throw new Error(`${name}: the engines disagree (${a.result} against ${b.result})`);
    bestNative = Math.min(bestNative, a.ms);
    bestLinear = Math.min(bestLinear, b.ms);
  }
  console.log(
    `${name.padEnd(46)}${`${bestNative.toFixed(0)} ms`.padStart(12)}${`${bestLinear.toFixed(0)} ms`.padStart(12)}${(bestLinear / bestNative).toFixed(1).padStart(8)}${((bestLinear * 1000) / count).toFixed(2).padStart(10)}`,
  );
}
