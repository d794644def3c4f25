/**
 * A small push tokenizer for JSON: text goes in by chunks of any size, events come out as soon
 * as each token is complete, so a file of any size is read with memory bounded by the longest
 * single string. Numbers are handed over as their source text, because v1 ids can exceed the
 * integers a double holds exactly.
 */
export type JsonEvent =
  | { type: 'startObject' }
  | { type: 'endObject' }
  | { type: 'startArray' }
  | { type: 'endArray' }
  | { type: 'key'; key: string }
  | { type: 'value'; value: string | boolean | null; number?: true };

/** Where a JSON document stops being JSON. */
export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

const enum State {
  Value,
  ValueOrArrayEnd,
  AfterValue,
  KeyOrObjectEnd,
  Key,
  Colon,
  String,
  Escape,
  Unicode,
  Literal,
  Done,
}

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const LITERAL_CHAR = /[0-9a-zA-Z.+-]/;

export class JsonTokenizer {
  private state = State.Value;
  private readonly containers: Array<'object' | 'array'> = [];
  private stringIsKey = false;
  private stringParts: string[] = [];
  private unicodeDigits = '';
  private literal = '';
  private literalStart = { line: 1, column: 0 };
  private line = 1;
  /** Column of the character being looked at, 1-based. */
  private column = 0;

  constructor(private readonly emit: (event: JsonEvent) => void) {}

  /** Where the tokenizer is: the line and column of the last character read. */
  get position(): { line: number; column: number } {
    return { line: this.line, column: this.column };
  }

  write(text: string): void {
    let i = 0;
    const length = text.length;
    while (i < length) {
      if (this.state === State.String) {
        i = this.scanString(text, i);
        continue;
      }
      const char = text[i] as string;
      this.column++;
      if (char === '\n') {
        this.line++;
        this.column = 0;
      }
      i++;
      this.step(char);
    }
  }

  end(): void {
    if (this.state === State.Literal) this.finishLiteral();
    if (this.state !== State.Done) this.fail('the document ends before it is complete');
  }

  /** Copies runs of plain characters in one slice; only quotes, escapes and control characters stop it. */
  private scanString(text: string, start: number): number {
    let i = start;
    while (i < text.length) {
      const code = text.charCodeAt(i);
      if (code === 0x22 || code === 0x5c || code < 0x20) break;
      i++;
    }
    if (i > start) this.stringParts.push(text.slice(start, i));
    this.column += i - start;
    if (i >= text.length) return i;
    const code = text.charCodeAt(i);
    this.column++;
    if (code < 0x20) this.fail('a control character (such as a raw line break) inside a string');
    if (code === 0x5c) this.state = State.Escape;
    else this.finishString();
    return i + 1;
  }

  private step(char: string): void {
    switch (this.state) {
      case State.Escape:
        this.escape(char);
        return;
      case State.Unicode:
        if (!/[0-9a-fA-F]/.test(char)) this.fail(`a \\u escape needs four hex digits; found ${JSON.stringify(char)}`);
        this.unicodeDigits += char;
        if (this.unicodeDigits.length === 4) {
          this.stringParts.push(String.fromCharCode(parseInt(this.unicodeDigits, 16)));
          this.unicodeDigits = '';
          this.state = State.String;
        }
        return;
      case State.Literal:
        if (LITERAL_CHAR.test(char)) {
          this.literal += char;
          return;
        }
        this.finishLiteral();
        this.step(char);
        return;
      default:
        break;
    }
    if (char === ' ' || char === '\n' || char === '\r' || char === '\t') return;
    switch (this.state) {
      case State.Value:
      case State.ValueOrArrayEnd:
        if (char === ']' && this.state === State.ValueOrArrayEnd) {
          this.closeContainer('array');
          return;
        }
        this.startValue(char);
        return;
      case State.AfterValue:
        if (char === ',') {
          this.state = this.containers.at(-1) === 'object' ? State.Key : State.Value;
          return;
        }
        if (char === '}') {
          this.closeContainer('object');
          return;
        }
        if (char === ']') {
          this.closeContainer('array');
          return;
        }
        this.fail(`expected ",", "}" or "]"; found ${JSON.stringify(char)}`);
        return;
      case State.KeyOrObjectEnd:
      case State.Key:
        if (char === '}' && this.state === State.KeyOrObjectEnd) {
          this.closeContainer('object');
          return;
        }
        if (char !== '"') this.fail(`expected a property name in double quotes; found ${JSON.stringify(char)}`);
        this.stringIsKey = true;
        this.stringParts = [];
        this.state = State.String;
        return;
      case State.Colon:
        if (char !== ':') this.fail(`expected ":" after a property name; found ${JSON.stringify(char)}`);
        this.state = State.Value;
        return;
      case State.Done:
        this.fail(`unexpected ${JSON.stringify(char)} after the end of the document`);
        return;
      default:
        return;
    }
  }

  private startValue(char: string): void {
    if (char === '{') {
      this.containers.push('object');
      this.emit({ type: 'startObject' });
      this.state = State.KeyOrObjectEnd;
    } else if (char === '[') {
      this.containers.push('array');
      this.emit({ type: 'startArray' });
      this.state = State.ValueOrArrayEnd;
    } else if (char === '"') {
      this.stringIsKey = false;
      this.stringParts = [];
      this.state = State.String;
    } else if (LITERAL_CHAR.test(char)) {
      this.literal = char;
      this.literalStart = { line: this.line, column: this.column };
      this.state = State.Literal;
    } else {
      this.fail(`expected a value; found ${JSON.stringify(char)}`);
    }
  }

  private escape(char: string): void {
    const simple: Record<string, string> = {
      '"': '"',
      '\\': '\\',
      '/': '/',
      b: '\b',
      f: '\f',
      n: '\n',
      r: '\r',
      t: '\t',
    };
    if (char === 'u') {
      this.unicodeDigits = '';
      this.state = State.Unicode;
      return;
    }
    const replacement = simple[char];
    if (replacement === undefined) this.fail(`unknown escape \\${char}`);
    this.stringParts.push(replacement as string);
    this.state = State.String;
  }

  private finishString(): void {
    const text = this.stringParts.join('');
    this.stringParts = [];
    if (this.stringIsKey) {
      this.emit({ type: 'key', key: text });
      this.state = State.Colon;
    } else {
      this.emit({ type: 'value', value: text });
      this.afterValue();
    }
  }

  private finishLiteral(): void {
    const literal = this.literal;
    this.literal = '';
    if (literal === 'true' || literal === 'false') this.emit({ type: 'value', value: literal === 'true' });
    else if (literal === 'null') this.emit({ type: 'value', value: null });
    else if (NUMBER.test(literal)) this.emit({ type: 'value', value: literal, number: true });
    else
      throw new JsonSyntaxError(
        `${JSON.stringify(literal)} is not a JSON value`,
        this.literalStart.line,
        this.literalStart.column,
      );
    this.afterValue();
  }

  private closeContainer(kind: 'object' | 'array'): void {
    const open = this.containers.pop();
    if (open !== kind) this.fail(`unexpected "${kind === 'object' ? '}' : ']'}"`);
    this.emit({ type: kind === 'object' ? 'endObject' : 'endArray' });
    this.afterValue();
  }

  private afterValue(): void {
    this.state = this.containers.length === 0 ? State.Done : State.AfterValue;
  }

  private fail(message: string): never {
    throw new JsonSyntaxError(message, this.line, this.column);
  }
}
