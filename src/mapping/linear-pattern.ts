import { RE2JS } from 're2js';

/**
 * Regular expressions written in a mapping (`replace` and `extract` with a pattern, `when.matches`)
 * run on RE2 (the re2js port), whose time grows with the text and never with the pattern's
 * ambiguity: `^(a+)+$` on a long cell costs what `^a+$` costs, where the built-in engine backtracks
 * for longer than any run lasts and never yields to a signal. RE2 has no lookarounds and no
 * backreferences, the two things that need backtracking; a pattern with either is refused when the
 * mapping is loaded, with the reason.
 *
 * The mapping's patterns are JavaScript's syntax. Where RE2 reads the same text differently, the
 * pattern is rewritten so that it means what JavaScript would: `\s` and `\S` keep JavaScript's white
 * space (no-break spaces and the Unicode spaces, not ASCII alone), and `.` leaves out `\r`, U+2028
 * and U+2029 as well as `\n` (unless the `s` flag is given).
 */

/** The characters JavaScript's `\s` matches, as the inside of a character class. */
const JS_SPACE = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
/** JavaScript's `.` without the `s` flag. */
const JS_DOT = '[^\\n\\r\\u2028\\u2029]';

/** A pattern crm-ferry will not run; the message reads after the pattern ("pattern \"(\" is not ..."). */
export class PatternError extends Error {
  override readonly name = 'PatternError';
}

/** A compiled pattern with the few operations the mapping needs, all in linear time. */
export interface LinearPattern {
  /** Whether the pattern matches anywhere in the text. */
  test(text: string): boolean;
  /** The first match and its groups (`undefined` for a group that took no part), or null. */
  exec(text: string): RegExpExecArray | null;
  /**
   * The text with matches replaced (every match with the `g` flag, else the first); `$1`, `$<name>`,
   * `$&` and `$$` in the replacement work as in String.prototype.replace.
   */
  replace(text: string, replacement: string): string;
  /** Number of capturing groups. */
  readonly groups: number;
}

/** What a pattern uses that RE2 cannot run, or the pattern rewritten to JavaScript's meaning. */
function rewrite(pattern: string, dotAll: boolean, sets: boolean): string {
  let out = '';
  let inClass = false;
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index] as string;
    if (char === '\\') {
      const next = pattern[index + 1];
      if (next === undefined) throw new PatternError('ends in a lone backslash');
      if (next >= '1' && next <= '9')
        throw new PatternError(
          `refers back to a group (\\${next}); backreferences need backtracking, which crm-ferry does not run`,
        );
      if (next === 'k' && pattern[index + 2] === '<')
        throw new PatternError(
          'refers back to a named group (\\k<...>); backreferences need backtracking, which crm-ferry does not run',
        );
      index += 1;
      if (next === 's') out += inClass ? JS_SPACE : `[${JS_SPACE}]`;
      else if (next === 'S') {
        if (inClass)
          throw new PatternError(
            'has \\S inside a character class, which cannot be run; write the class as [^...] instead',
          );
        out += `[^${JS_SPACE}]`;
      } else out += `\\${next}`;
      continue;
    }
    if (inClass) {
      if (char === ']') inClass = false;
      if (sets && (char === '[' || ((char === '-' || char === '&') && pattern[index + 1] === char))) {
        throw new PatternError(
          'uses a nested class or a set operation (--, &&) of the v flag, which cannot be run; list the characters in one class',
        );
      }
      // A `[` inside a class is a member in JavaScript; RE2 would start a named class ([:alpha:]).
      out += char === '[' ? '\\[' : char;
      continue;
    }
    if (char === '[') {
      // JavaScript's `[]` matches nothing and `[^]` anything; RE2 would read the `]` as a member.
      const negated = pattern[index + 1] === '^';
      if (pattern[index + (negated ? 2 : 1)] === ']') {
        out += negated ? '[\\x00-\\x{10FFFF}]' : '[^\\x00-\\x{10FFFF}]';
        index += negated ? 2 : 1;
        continue;
      }
      inClass = true;
      out += negated ? '[^' : '[';
      if (negated) index += 1;
      continue;
    }
    if (char === '(' && pattern[index + 1] === '?') {
      const kind = pattern.slice(index + 2, index + 4);
      if (kind.startsWith('=') || kind.startsWith('!'))
        throw new PatternError(
          `looks ahead (${pattern.slice(index, index + 3)}...); lookarounds need backtracking, which crm-ferry does not run`,
        );
      if (kind === '<=' || kind === '<!')
        throw new PatternError(
          `looks behind (${pattern.slice(index, index + 4)}...); lookarounds need backtracking, which crm-ferry does not run`,
        );
    }
    if (char === '.' && !dotAll) {
      out += JS_DOT;
      continue;
    }
    out += char;
  }
  return out;
}

/** The text with the first match, or every one, replaced by a literal. */
function spliceMatches(compiled: RE2JS, text: string, literal: string, all: boolean): string {
  const matcher = compiled.matcher(text);
  if (!matcher.find()) return text;
  let out = '';
  let last = 0;
  do {
    out += text.slice(last, matcher.start()) + literal;
    last = matcher.end();
  } while (all && matcher.find());
  return out + text.slice(last);
}

/** RE2's flags for JavaScript's; `g` is the caller's (it chooses replace-all), `u` and `v` are always on in RE2. */
function re2Flags(flags: string): number {
  let out = 0;
  if (flags.includes('i')) out |= RE2JS.CASE_INSENSITIVE;
  if (flags.includes('m')) out |= RE2JS.MULTILINE;
  if (flags.includes('s')) out |= RE2JS.DOTALL;
  return out;
}

/** The message of RE2's syntax error without its prefix. */
function syntaxReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^error parsing regexp: /, '');
}

/**
 * Compiles a mapping's pattern (JavaScript syntax and flags) for the linear-time engine, or throws
 * a {@link PatternError} saying why it cannot run.
 */
export function compileLinearPattern(pattern: string, flags = ''): LinearPattern {
  const rewritten = rewrite(pattern, flags.includes('s'), flags.includes('v'));
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(rewritten), re2Flags(flags));
  } catch (error) {
    throw new PatternError(`is not a valid regular expression (${syntaxReason(error)})`, { cause: error });
  }
  const all = flags.includes('g');
  return {
    test: (text) => compiled.test(text),
    exec: (text) => compiled.exec(text) as RegExpExecArray | null,
    replace(text, replacement) {
      // A replacement without `$` needs no expansion: splicing it in between the matches costs
      // about two thirds of what the library's replaceAll does (bench/patterns.ts).
      if (!replacement.includes('$')) return spliceMatches(compiled, text, replacement, all);
      const matcher = compiled.matcher(text);
      return all ? matcher.replaceAll(replacement) : matcher.replaceFirst(replacement);
    },
    groups: compiled.groupCount(),
  };
}

/** Why a pattern cannot be run, for a problem at load; undefined when it can. */
export function linearPatternProblem(pattern: string, flags = ''): string | undefined {
  try {
    compileLinearPattern(pattern, flags);
    return undefined;
  } catch (error) {
    if (error instanceof PatternError) return error.message;
    throw error;
  }
}
