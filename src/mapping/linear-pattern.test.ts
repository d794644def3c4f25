import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileLinearPattern, linearPatternProblem } from './linear-pattern.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHILD = fileURLToPath(new URL('../../test/helpers/pattern-child.ts', import.meta.url));

/** Patterns that make a backtracking engine take time exponential (or of a high power) in the text's length. */
const CATASTROPHIC = ['^(a+)+$', '(a|aa)+$', '(.*a){20}'];
const SITES = ['replace (regex)', 'extract', 'when.matches', 'when.matches with empty', 'skip.matches'];
/** Most milliseconds one case may take on a 100,000-character cell (linear: a few). */
const CASE_LIMIT_MS = 2000;
/** The whole child, start-up included, before it is killed. */
const CHILD_LIMIT_MS = 30_000;

interface Finished {
  pattern: string;
  site: string;
  ms: number;
}

/** Runs the child, killing it at the limit; the cases it finished by then. */
function runCases(patterns: string[], length: number): Promise<{ finished: Finished[]; killed: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(patterns), String(length)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, CHILD_LIMIT_MS);
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (!killed && code !== 0) reject(new Error(`the child failed (${code}): ${err}`));
      const finished = out
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Finished);
      resolve({ finished, killed });
    });
  });
}

describe('patterns from a mapping run in linear time', () => {
  it(
    'runs every pattern-taking transform and condition with catastrophic patterns on a 100,000-character cell within the limit',
    async () => {
      const { finished, killed } = await runCases(CATASTROPHIC, 100_000);
      expect(killed).toBe(false);
      expect(finished.map(({ pattern, site }) => `${pattern} in ${site}`)).toEqual(
        CATASTROPHIC.flatMap((pattern) => SITES.map((site) => `${pattern} in ${site}`)),
      );
      for (const { pattern, site, ms } of finished)
        expect({ pattern, site, slow: ms > CASE_LIMIT_MS }).toEqual({ pattern, site, slow: false });
    },
    CHILD_LIMIT_MS + 10_000,
  );
});

describe('compileLinearPattern keeps JavaScript meaning', () => {
  it.each([
    ['\\s+', 'g', 'a\u00a0 b\tc', '_', 'a_b_c'],
    ['^(\\w+), (\\w+)$', '', 'Lovelace, Ada', '$2 $1', 'Ada Lovelace'],
    ['(?<y>\\d{4})', '', 'in 2024', '[$<y>]', 'in [2024]'],
    ['x*', 'g', 'abc', '-', '-a-b-c-'],
    ['x*', 'g', 'abc', '$$', '$a$b$c$'],
    ['b*', 'g', 'abbc', '-', '-a--c-'],
    ['b', '', 'abbc', '-', 'a-bc'],
    ['[aeiou]', 'g', 'education', '', 'dctn'],
    ['a.b', '', 'a\rb a-b', '=', 'a\rb ='],
    ['a.b', 's', 'a\rb', '=', '='],
    ['foo', 'gi', 'Foo FOO', 'x', 'x x'],
    ['[^]', 'g', 'a\n', '.', '..'],
    ['[[:alpha:]]', 'g', '[:]b', '-', '[-b'],
  ])('/%s/%s on %j with %j gives %j, as the built-in engine does', (pattern, flags, text, replacement, out) => {
    expect(compileLinearPattern(pattern, flags).replace(text, replacement)).toBe(out);
    expect(text.replace(new RegExp(pattern, flags), replacement)).toBe(out);
  });

  it.each([
    ['a(?!b)', 'looks ahead ((?!...); lookarounds need backtracking, which crm-ferry does not run'],
    ['(?<!a)b', 'looks behind ((?<!...); lookarounds need backtracking, which crm-ferry does not run'],
    [
      '(?<n>a)\\k<n>',
      'refers back to a named group (\\k<...>); backreferences need backtracking, which crm-ferry does not run',
    ],
    ['[\\S,]', 'has \\S inside a character class, which cannot be run; write the class as [^...] instead'],
    ['a{1001}', 'is not a valid regular expression (invalid repeat count: `{1001}`)'],
  ])('refuses %j: %s', (pattern, reason) => {
    expect(linearPatternProblem(pattern)).toBe(reason);
  });

  it('refuses the v flag’s set operations instead of reading them differently', () => {
    expect(linearPatternProblem('[a-z--[aeiou]]', 'v')).toContain('set operation');
  });
});
