/**
 * A small writer of JavaScript source, used to turn a whole mapping into one function per mapping.
 *
 * Why generate code: a mapping is a list of twenty-odd small steps run a million times. Built as
 * closures, every step of one kind shares one piece of machine code, so each property read by
 * column name and each write by target name meets every column and target of the mapping and the
 * engine falls back to its slowest lookups. Generated straight-line code gives every read and
 * write its own site with a literal name, and calls each transform directly.
 *
 * Safety: nothing from a mapping file is ever pasted into the source as code. Column and target
 * names appear only as JSON string literals (`values["First Name"]`); every other value, function,
 * message or object is passed in as a constant and named `$0`, `$1`, ... The source is kept so a
 * failure inside it can be read (`CompiledMapping.source`).
 *
 * A cell of the row is written as a placeholder (`cell`), so one body serves rows of either shape:
 * named values (`values["Email"]`) or, once a file's header is known, fields by position
 * (`fields[3]`). The placeholder is a control character, which a JSON string literal never holds
 * unescaped.
 */
export class CodeWriter {
  private readonly lines: string[] = [];
  private readonly constants: unknown[] = [];
  private readonly named = new Map<unknown, string>();
  private readonly cells: string[] = [];
  private depth = 1;
  private temps = 0;
  private dynamic = false;

  /** An expression for the row's cell of a column (see the header: filled in when the function is built). */
  cell(column: string): string {
    let index = this.cells.indexOf(column);
    if (index < 0) index = this.cells.push(column) - 1;
    return `\u0001${index}\u0001`;
  }

  /**
   * An expression for the row's cell of a column whose name is only known per row: `name` is an
   * expression of the generated code (built from literals and loop counters, never mapping text).
   * It reads as undefined when the row has no such column.
   */
  dynamicCell(name: string): string {
    this.dynamic = true;
    return `\u0002${name}\u0002`;
  }

  /** Passes a value (a function, an object, text) into the generated code; returns the name it has there. */
  constant(value: unknown): string {
    // The same function or object passed twice is one constant.
    let name = this.named.get(value);
    if (name === undefined) {
      this.constants.push(value);
      name = `$${this.constants.length - 1}`;
      this.named.set(value, name);
    }
    return name;
  }

  /** A new local variable, declared at once with `let` (optionally with an initial expression). */
  temp(prefix = 't', initial?: string): string {
    const name = this.name(prefix);
    this.line(initial === undefined ? `let ${name};` : `let ${name} = ${initial};`);
    return name;
  }

  /** A new name for a label or a variable declared by the caller. */
  name(prefix: string): string {
    return `${prefix}${this.temps++}`;
  }

  /** One statement or line of the function body. */
  line(text: string): void {
    this.lines.push(`${'  '.repeat(this.depth)}${text}`);
  }

  /** A braced block: `open {` ... `}` with the lines `body` writes indented inside. */
  block(open: string, body: () => void, close = '}'): void {
    this.line(open === '' ? '{' : `${open} {`);
    this.depth++;
    body();
    this.depth--;
    this.line(close);
  }

  /** Same as block, for bodies that await while they write (compiling transforms may read files). */
  async blockAsync(open: string, body: () => Promise<void>, close = '}'): Promise<void> {
    this.line(open === '' ? '{' : `${open} {`);
    this.depth++;
    await body();
    this.depth--;
    this.line(close);
  }

  /**
   * The source so far, as the body of a function with the given parameters; `prologue` lines go
   * first (declarations that only the finished body shows to be needed).
   */
  source(
    name: string,
    params: readonly string[],
    prologue: readonly string[] = [],
    cells: CellReader = namedCell,
  ): string {
    const constants = this.constants.map((_, i) => `const $${i} = constants[${i}];`);
    if (this.dynamic && cells.header !== undefined)
      constants.push(
        `const columnIndex = new Map(${JSON.stringify(cells.header.map((column, index) => [column, index]))});`,
      );
    const body = [...prologue.map((line) => `  ${line}`), ...this.lines]
      .join('\n')
      .replace(/\u0001(\d+)\u0001/g, (_, index: string) => cells(this.cells[Number(index)] as string))
      .replace(/\u0002([^\u0002]*)\u0002/g, (_, expression: string) =>
        cells.header === undefined ? `values[${expression}]` : `fields[columnIndex.get(${expression}) ?? -1]`,
      );
    return `${constants.join('\n')}\nreturn function ${name}(${params.join(', ')}) {\n${body}\n};`;
  }

  /** Builds the function; `cells` says how a cell is read (by name from `values`, unless told otherwise). */
  build<F>(
    name: string,
    params: readonly string[],
    prologue: readonly string[] = [],
    cells: CellReader = namedCell,
  ): { fn: F; source: string } {
    const source = this.source(name, params, prologue, cells);
    const factory = new Function('constants', source) as (constants: unknown[]) => F;
    return { fn: factory(this.constants), source };
  }
}

/**
 * The expression that reads a column's cell in generated code. A reader by position carries the
 * header, for cells whose column is only known per row (numbered columns, `dynamicCell`).
 */
export type CellReader = ((column: string) => string) & { header?: readonly string[] };

/** Cells read by name from the parameter `values`. */
export const namedCell: CellReader = (column) => `values[${literal(column)}]`;

/** Cells read by position from the parameter `fields`, for a file with this header; a column it lacks reads as undefined. */
export function positionalCells(header: readonly string[]): CellReader {
  const reader: CellReader = (column) => {
    const index = header.indexOf(column);
    return index < 0 ? 'undefined' : `fields[${index}]`;
  };
  reader.header = header;
  return reader;
}

/** A JavaScript string literal for text (JSON's quoting is valid JavaScript). */
export function literal(text: string): string {
  return JSON.stringify(text);
}
