/*
 * The numbering-plan patterns of libphonenumber's metadata are regular expressions over digits
 * only, some over a thousand characters long. A backtracking RegExp walks their alternatives one
 * by one for every number; a deterministic automaton over the ten digits answers in one table
 * lookup per digit. States are built on first use, so only the parts of a pattern real numbers
 * reach are ever built. A pattern using anything outside the small grammar read here, or one
 * whose automaton would grow too large, keeps its RegExp: answers never depend on which is used.
 */

/** A set of digits as a 10-bit mask: bit d stands for the digit d. */
type DigitSet = number;

const ALL_DIGITS: DigitSet = 0x3ff;

type Node =
  | { kind: 'set'; digits: DigitSet }
  | { kind: 'seq'; items: Node[] }
  | { kind: 'alt'; options: Node[] }
  | { kind: 'repeat'; node: Node; min: number; max: number };

/** Thrown for any syntax the reader does not handle; the caller then keeps the RegExp. */
class UnsupportedPatternError extends Error {}

/** Reads the pattern grammar the metadata uses: digits, `\d`, classes, groups, `|`, `?`, `*`, `+`, `{n}`, `{n,}`, `{n,m}`. */
function parsePattern(source: string): Node {
  let at = 0;
  const fail = (): never => {
    throw new UnsupportedPatternError(`unsupported pattern syntax at ${at} in ${source.slice(0, 40)}`);
  };
  const readNumber = (): number => {
    const start = at;
    while (at < source.length && source.charCodeAt(at) >= 48 && source.charCodeAt(at) <= 57) at++;
    if (at === start) fail();
    return Number(source.slice(start, at));
  };
  const readClass = (): DigitSet => {
    // at is just past '['
    if (source[at] === '^') fail();
    let digits = 0;
    while (at < source.length && source[at] !== ']') {
      if (source[at] === '\\') {
        if (source[at + 1] !== 'd') fail();
        digits |= ALL_DIGITS;
        at += 2;
        continue;
      }
      const low = source.charCodeAt(at) - 48;
      if (low < 0 || low > 9) fail();
      at++;
      if (source[at] === '-' && source[at + 1] !== ']') {
        const high = source.charCodeAt(at + 1) - 48;
        if (high < low || high > 9) fail();
        for (let d = low; d <= high; d++) digits |= 1 << d;
        at += 2;
      } else digits |= 1 << low;
    }
    if (source[at] !== ']') fail();
    at++;
    return digits;
  };
  const readAtom = (): Node => {
    const char = source[at];
    if (char === '(') {
      at++;
      if (source[at] === '?') {
        if (source[at + 1] !== ':') fail();
        at += 2;
      }
      const inner = readAlternation();
      if (source[at] !== ')') fail();
      at++;
      return inner;
    }
    if (char === '[') {
      at++;
      return { kind: 'set', digits: readClass() };
    }
    if (char === '\\') {
      if (source[at + 1] !== 'd') fail();
      at += 2;
      return { kind: 'set', digits: ALL_DIGITS };
    }
    const digit = source.charCodeAt(at) - 48;
    if (digit < 0 || digit > 9) fail();
    at++;
    return { kind: 'set', digits: 1 << digit };
  };
  const readQuantified = (): Node => {
    const node = readAtom();
    const char = source[at];
    if (char === '?') {
      at++;
      return { kind: 'repeat', node, min: 0, max: 1 };
    }
    if (char === '*' || char === '+') {
      at++;
      return { kind: 'repeat', node, min: char === '+' ? 1 : 0, max: Infinity };
    }
    if (char === '{') {
      at++;
      const min = readNumber();
      let max = min;
      if (source[at] === ',') {
        at++;
        max = source[at] === '}' ? Infinity : readNumber();
      }
      if (source[at] !== '}' || max < min) fail();
      at++;
      // A lazy quantifier changes which match is found, not whether one exists; still, refuse it rather than reason about it.
      if (source[at] === '?') fail();
      return { kind: 'repeat', node, min, max };
    }
    return node;
  };
  const readSequence = (): Node => {
    const items: Node[] = [];
    while (at < source.length && source[at] !== '|' && source[at] !== ')') items.push(readQuantified());
    return { kind: 'seq', items };
  };
  function readAlternation(): Node {
    const options = [readSequence()];
    while (source[at] === '|') {
      at++;
      options.push(readSequence());
    }
    return options.length === 1 ? (options[0] as Node) : { kind: 'alt', options };
  }
  const tree = readAlternation();
  if (at !== source.length) fail();
  return tree;
}

/** A nondeterministic automaton: per state, empty moves and digit-set moves. */
class Nfa {
  readonly empty: number[][] = [];
  readonly moves: Array<Array<[DigitSet, number]>> = [];

  add(): number {
    this.empty.push([]);
    this.moves.push([]);
    return this.empty.length - 1;
  }

  /** Adds the states for node starting at from; returns the state reached after it. */
  build(node: Node, from: number): number {
    switch (node.kind) {
      case 'set': {
        const to = this.add();
        (this.moves[from] as Array<[DigitSet, number]>).push([node.digits, to]);
        return to;
      }
      case 'seq': {
        let at = from;
        for (const item of node.items) at = this.build(item, at);
        return at;
      }
      case 'alt': {
        const end = this.add();
        for (const option of node.options) {
          const start = this.add();
          (this.empty[from] as number[]).push(start);
          (this.empty[this.build(option, start)] as number[]).push(end);
        }
        return end;
      }
      case 'repeat': {
        let at = from;
        for (let i = 0; i < node.min; i++) {
          // A fresh start state per copy keeps one copy's loop from leaking into the next.
          const start = this.add();
          (this.empty[at] as number[]).push(start);
          at = this.build(node.node, start);
        }
        if (node.max === Infinity) {
          const loop = this.add();
          (this.empty[at] as number[]).push(loop);
          const start = this.add();
          (this.empty[loop] as number[]).push(start);
          (this.empty[this.build(node.node, start)] as number[]).push(loop);
          return loop;
        }
        const end = this.add();
        for (let i = node.min; i < node.max; i++) {
          (this.empty[at] as number[]).push(end);
          const start = this.add();
          (this.empty[at] as number[]).push(start);
          at = this.build(node.node, start);
        }
        (this.empty[at] as number[]).push(end);
        return end;
      }
    }
  }
}

/**
 * Past this many states the automaton stops growing and the RegExp answers instead. State numbers
 * must fit the 16-bit transition tables, which are kept small so they stay in the cache.
 */
const MAX_STATES = 20_000;
const UNKNOWN = -1;
const DEAD = 0;

/**
 * A whole or prefix matcher for a digit pattern, with the same answers as the RegExp. Digits are
 * given as values 0-9 in `digits[from..to)`, so callers need not build a string per number.
 */
export interface DigitPattern {
  /** Whether all of the digits match, as `^(?:pattern)$` would. */
  matches(digits: Uint8Array, from: number, to: number): boolean;
  /** Whether some start of the digits matches, as `text.search(pattern) === 0` would. */
  matchesStart(digits: Uint8Array, from: number, to: number): boolean;
}

/** The digits as text, for the RegExp fallbacks. */
function digitsToText(digits: Uint8Array, from: number, to: number): string {
  let text = '';
  for (let i = from; i < to; i++) text += String.fromCharCode(48 + (digits[i] as number));
  return text;
}

class DigitAutomaton implements DigitPattern {
  private readonly nfa: Nfa;
  private readonly accepting: number;
  private readonly fallbackWhole: RegExp;
  private readonly fallbackStart: RegExp;
  private readonly sets: number[][] = [];
  private readonly byKey = new Map<string, number>();
  private accepts: Uint8Array = new Uint8Array(64);
  private next: Int16Array = new Int16Array(640).fill(UNKNOWN);
  private full = false;
  private readonly mark: Int32Array;
  private markRound = 0;

  constructor(source: string, tree: Node) {
    this.nfa = new Nfa();
    const start = this.nfa.add();
    this.accepting = this.nfa.build(tree, start);
    this.mark = new Int32Array(this.nfa.empty.length);
    this.fallbackWhole = new RegExp(`^(?:${source})$`);
    this.fallbackStart = new RegExp(`^(?:${source})`);
    this.intern([]); // DEAD: no state left, every digit leads back here
    this.intern(this.closure([start]));
  }

  /** The states reachable from these by empty moves, sorted so equal sets get equal keys. */
  private closure(states: number[]): number[] {
    const round = ++this.markRound;
    const out: number[] = [];
    const stack = states.slice();
    while (stack.length > 0) {
      const state = stack.pop() as number;
      if (this.mark[state] === round) continue;
      this.mark[state] = round;
      out.push(state);
      for (const to of this.nfa.empty[state] as number[]) if (this.mark[to] !== round) stack.push(to);
    }
    return out.sort((a, b) => a - b);
  }

  private intern(set: number[]): number {
    const key = set.join(',');
    const known = this.byKey.get(key);
    if (known !== undefined) return known;
    const index = this.sets.length;
    if (index >= MAX_STATES) return UNKNOWN;
    this.sets.push(set);
    this.byKey.set(key, index);
    if (index >= this.accepts.length) {
      const accepts = new Uint8Array(this.accepts.length * 2);
      accepts.set(this.accepts);
      this.accepts = accepts;
      const next = new Int16Array(this.next.length * 2).fill(UNKNOWN);
      next.set(this.next);
      this.next = next;
    }
    this.accepts[index] = set.includes(this.accepting) ? 1 : 0;
    if (index === DEAD) this.next.fill(DEAD, 0, 10);
    return index;
  }

  /** Builds the move from state on digit; UNKNOWN when the automaton is full. */
  private step(state: number, digit: number): number {
    const targets: number[] = [];
    const bit = 1 << digit;
    for (const nfaState of this.sets[state] as number[]) {
      for (const [digits, to] of this.nfa.moves[nfaState] as Array<[DigitSet, number]>)
        if ((digits & bit) !== 0) targets.push(to);
    }
    const target = this.intern(targets.length === 0 ? [] : this.closure(targets));
    if (target === UNKNOWN) {
      this.full = true;
      return UNKNOWN;
    }
    this.next[state * 10 + digit] = target;
    return target;
  }

  /** The state after digit from state (1 is the start, 0 the dead state), or UNKNOWN once the automaton is full. */
  transition(state: number, digit: number): number {
    const target = this.next[state * 10 + digit] as number;
    return target === UNKNOWN ? this.step(state, digit) : target;
  }

  isAccepting(state: number): boolean {
    return this.accepts[state] === 1;
  }

  matches(digits: Uint8Array, from: number, to: number): boolean {
    return this.walk(digits, from, to, false);
  }

  matchesStart(digits: Uint8Array, from: number, to: number): boolean {
    return this.walk(digits, from, to, true);
  }

  /** Whole digits (`start` false) or some start of them (`start` true) in the pattern's language. */
  private walk(digits: Uint8Array, from: number, to: number, start: boolean): boolean {
    const fallback = start ? this.fallbackStart : this.fallbackWhole;
    if (this.full) return fallback.test(digitsToText(digits, from, to));
    // Re-read after a step: building a state may replace the table with a larger one.
    let next = this.next;
    let state = 1;
    if (start && this.accepts[state] === 1) return true;
    for (let i = from; i < to; i++) {
      const digit = digits[i] as number;
      let target = next[state * 10 + digit] as number;
      if (target === UNKNOWN) {
        target = this.step(state, digit);
        if (target === UNKNOWN) return fallback.test(digitsToText(digits, from, to));
        next = this.next;
      }
      if (target === DEAD) return false;
      if (start && this.accepts[target] === 1) return true;
      state = target;
    }
    return !start && this.accepts[state] === 1;
  }
}

/** The RegExp itself, for patterns outside the grammar. */
class RegExpPattern implements DigitPattern {
  private readonly whole: RegExp;
  private readonly start: RegExp;

  constructor(source: string) {
    this.whole = new RegExp(`^(?:${source})$`);
    this.start = new RegExp(`^(?:${source})`);
  }

  matches(digits: Uint8Array, from: number, to: number): boolean {
    return this.whole.test(digitsToText(digits, from, to));
  }

  matchesStart(digits: Uint8Array, from: number, to: number): boolean {
    return this.start.test(digitsToText(digits, from, to));
  }
}

/** One pattern in a product: `start` asks whether some start of the digits matches, otherwise all of them must. */
export interface ProductPart {
  pattern: DigitPattern;
  start: boolean;
}

/** A start-part state meaning "some start has matched": it stays so whatever follows. */
const MATCHED = -3;
const UNKNOWN_VERDICT = -2;

/**
 * Several patterns walked at once: one automaton whose states are the tuples of the parts'
 * states, built on first use like the parts. One walk of the digits answers every part, where
 * walking each part in turn would read the digits once per part. `decide` turns which parts
 * matched into the caller's verdict (a small integer), kept per final state.
 */
export class DigitProduct {
  private readonly automata: DigitAutomaton[] | null;
  private readonly tuples: Int32Array[] = [];
  private readonly byKey = new Map<string, number>();
  // Small to start with: a product exists per calling code, fallback country and length, and most stay small.
  private verdicts: Int32Array = new Int32Array(16).fill(UNKNOWN_VERDICT);
  private next: Int16Array = new Int16Array(160).fill(UNKNOWN);
  private full = false;
  /** The verdict when every part is dead, so a walk can stop at the first digit that kills them all. */
  private readonly deadVerdict: number;

  constructor(
    private readonly parts: readonly ProductPart[],
    private readonly decide: (matched: (part: number) => boolean) => number,
  ) {
    const automata = parts.map((part) => part.pattern);
    this.automata = automata.every((pattern) => pattern instanceof DigitAutomaton)
      ? (automata as DigitAutomaton[])
      : null;
    this.deadVerdict = decide(() => false);
    if (this.automata === null) return;
    this.intern(new Int32Array(parts.length)); // index 0: every part dead
    const start = new Int32Array(parts.length);
    for (let i = 0; i < parts.length; i++) start[i] = this.settle(i, 1);
    this.intern(start);
  }

  /** A start part that has matched stays matched; any other state is kept as it is. */
  private settle(part: number, state: number): number {
    return (this.parts[part] as ProductPart).start &&
      state > 0 &&
      (this.automata as DigitAutomaton[])[part]?.isAccepting(state)
      ? MATCHED
      : state;
  }

  private intern(tuple: Int32Array): number {
    const key = tuple.join(',');
    const known = this.byKey.get(key);
    if (known !== undefined) return known;
    const index = this.tuples.length;
    if (index >= MAX_STATES) return UNKNOWN;
    this.tuples.push(tuple);
    this.byKey.set(key, index);
    if (index >= this.verdicts.length) {
      const verdicts = new Int32Array(this.verdicts.length * 2).fill(UNKNOWN_VERDICT);
      verdicts.set(this.verdicts);
      this.verdicts = verdicts;
      const next = new Int16Array(this.next.length * 2).fill(UNKNOWN);
      next.set(this.next);
      this.next = next;
    }
    if (index === DEAD) {
      this.next.fill(DEAD, 0, 10);
    }
    return index;
  }

  private step(state: number, digit: number): number {
    const automata = this.automata as DigitAutomaton[];
    const from = this.tuples[state] as Int32Array;
    const tuple = new Int32Array(from.length);
    for (let i = 0; i < from.length; i++) {
      const part = from[i] as number;
      if (part === MATCHED || part === DEAD) {
        tuple[i] = part;
        continue;
      }
      const target = (automata[i] as DigitAutomaton).transition(part, digit);
      if (target === UNKNOWN) return UNKNOWN;
      tuple[i] = this.settle(i, target);
    }
    const target = this.intern(tuple);
    if (target !== UNKNOWN) this.next[state * 10 + digit] = target;
    return target;
  }

  private verdictOf(state: number): number {
    let verdict = this.verdicts[state] as number;
    if (verdict === UNKNOWN_VERDICT) {
      const tuple = this.tuples[state] as Int32Array;
      const automata = this.automata as DigitAutomaton[];
      verdict = this.decide((part) => {
        const at = tuple[part] as number;
        if ((this.parts[part] as ProductPart).start) return at === MATCHED;
        return at > 0 && (automata[part] as DigitAutomaton).isAccepting(at);
      });
      this.verdicts[state] = verdict;
    }
    return verdict;
  }

  /** Asks each part on its own: for parts outside the grammar and for a product grown too large. */
  private slow(digits: Uint8Array, from: number, to: number): number {
    return this.decide((part) => {
      const { pattern, start } = this.parts[part] as ProductPart;
      return start ? pattern.matchesStart(digits, from, to) : pattern.matches(digits, from, to);
    });
  }

  /** The verdict for `digits[from..to)`. */
  verdict(digits: Uint8Array, from: number, to: number): number {
    if (this.full || this.automata === null) return this.slow(digits, from, to);
    let next = this.next;
    let state = 1;
    for (let i = from; i < to; i++) {
      const digit = digits[i] as number;
      let target = next[state * 10 + digit] as number;
      if (target === UNKNOWN) {
        target = this.step(state, digit);
        if (target === UNKNOWN) {
          this.full = true;
          return this.slow(digits, from, to);
        }
        next = this.next;
      }
      if (target === DEAD) return this.deadVerdict;
      state = target;
    }
    return this.verdictOf(state);
  }
}

/**
 * Compiles a metadata pattern into a matcher over digit strings. Patterns in the digit grammar
 * get an automaton built on demand; anything else keeps a RegExp with the same anchoring.
 */
export function compileDigitPattern(source: string): DigitPattern {
  let tree: Node;
  try {
    tree = parsePattern(source);
  } catch (error) {
    if (error instanceof UnsupportedPatternError) return new RegExpPattern(source);
    throw error;
  }
  return new DigitAutomaton(source, tree);
}

/** Whether the pattern is read by the automaton (true) or left to a RegExp; for tests. */
export function isAutomatonPattern(pattern: DigitPattern): boolean {
  return pattern instanceof DigitAutomaton;
}

/** Test support: a random string of the pattern's language, or undefined outside the grammar. */
export function sampleDigitPattern(source: string, random: () => number): string | undefined {
  let tree: Node;
  try {
    tree = parsePattern(source);
  } catch (error) {
    if (error instanceof UnsupportedPatternError) return undefined;
    throw error;
  }
  const pickDigit = (digits: DigitSet): string => {
    const choices: number[] = [];
    for (let d = 0; d < 10; d++) if ((digits & (1 << d)) !== 0) choices.push(d);
    return String(choices[Math.floor(random() * choices.length)] ?? '');
  };
  const walk = (node: Node): string => {
    switch (node.kind) {
      case 'set':
        return pickDigit(node.digits);
      case 'seq':
        return node.items.map(walk).join('');
      case 'alt':
        return walk(node.options[Math.floor(random() * node.options.length)] as Node);
      case 'repeat': {
        const max = node.max === Infinity ? node.min + 3 : node.max;
        const count = node.min + Math.floor(random() * (max - node.min + 1));
        let out = '';
        for (let i = 0; i < count; i++) out += walk(node.node);
        return out;
      }
    }
  };
  return walk(tree);
}
