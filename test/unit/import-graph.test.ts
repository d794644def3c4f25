import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');
const WEB = resolve(import.meta.dirname, '../../web');

/**
 * The rooms of src/, lowest first: a room may import only rooms before it in this list, so data
 * and knowledge flow one way (errors and helpers at the bottom, the command line at the top). The
 * files directly in src/ (the module's entry, the demo) stand above every room. A new room is
 * placed here once, where what it imports allows.
 */
const ROOM_ORDER = [
  'errors',
  'files',
  'util',
  'journal',
  'client',
  'sources',
  'mapping',
  'plan',
  'load',
  'export',
  'verify',
  'report',
  'backup',
  'sandbox',
  'fleet',
  'workbench',
  'cli',
] as const;

/** Every .ts (and .tsx) file under a folder (tests beside the code are not part of the graph). */
function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/**
 * The relative imports of a file, static and dynamic, types included: a circle through a type
 * import still ties two modules together. Comments are dropped first, so an example in a doc
 * comment is not an import.
 */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const found = new Set<string>();
  for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)) {
    found.add(resolve(dirname(file), match[1] as string));
  }
  return [...found];
}

/** Strongly connected components with more than one module, or a module importing itself (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** The relative imports of a file that remain at run time: a type import is gone then. */
function valueImports(file: string): string[] {
  const text = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const found = new Set<string>();
  for (const match of text.matchAll(
    /(?:\b(?:import|export)\s+(?!type\b)[^'";]*?\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm,
  )) {
    found.add(resolve(dirname(file), match[1] as string));
  }
  return [...found];
}

describe('the import graph of src/', () => {
  const graph = new Map(sourceFiles(SRC).map((file) => [file, importsOf(file)]));

  it('reads the imports it is meant to (a check on the reader itself)', () => {
    expect(graph.size).toBeGreaterThan(100);
    const main = graph.get(join(SRC, 'cli/main.ts')) ?? [];
    expect(main.length).toBeGreaterThan(0);
    for (const imports of graph.values())
      for (const target of imports) expect(graph.has(target), `${target} exists`).toBe(true);
  });

  it('has no circles: every module can be understood (and loaded) before the ones that use it', () => {
    const named = circles(graph).map((component) => component.map((file) => relative(SRC, file)));
    expect(named).toEqual([]);
  });

  /** The room of a file: the first folder under src/ (null for a file directly in src/). */
  const roomOf = (file: string): string | null => {
    const parts = relative(SRC, file).split('/');
    return parts.length > 1 ? (parts[0] as string) : null;
  };

  it("goes into a room only through its door: a file of another room imports that room's index.ts", () => {
    const around: string[] = [];
    for (const [file, imports] of graph) {
      for (const target of imports) {
        const room = roomOf(target);
        if (room === null || room === roomOf(file)) continue;
        if (relative(SRC, target) !== join(room, 'index.ts'))
          around.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
      }
    }
    expect(around).toEqual([]);
  });

  it('has every room in ROOM_ORDER, and every room in ROOM_ORDER under src/', () => {
    const rooms = new Set([...graph.keys()].map(roomOf).filter((room): room is string => room !== null));
    expect(
      [...rooms].filter((room) => !(ROOM_ORDER as readonly string[]).includes(room)),
      'rooms to place in ROOM_ORDER',
    ).toEqual([]);
    expect(
      ROOM_ORDER.filter((room) => !rooms.has(room)),
      'rooms that are gone',
    ).toEqual([]);
  });

  it('imports downwards only: no room imports a room above it in ROOM_ORDER, nor a file directly in src/', () => {
    const rank = (file: string): number => {
      const room = roomOf(file);
      return room === null ? ROOM_ORDER.length : (ROOM_ORDER as readonly string[]).indexOf(room);
    };
    const upwards: string[] = [];
    for (const [file, imports] of graph) {
      for (const target of imports) {
        if (roomOf(target) !== roomOf(file) && rank(target) >= rank(file))
          upwards.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
      }
    }
    expect(upwards).toEqual([]);
  });

  it('keeps the mapping away from the network: mapping/ uses client/ only for types, and reaches it through no other room at run time', () => {
    const direct = [...graph.keys()]
      .filter((file) => roomOf(file) === 'mapping')
      .flatMap((file) =>
        valueImports(file)
          .filter((target) => roomOf(target) === 'client')
          .map((target) => `${relative(SRC, file)} -> ${relative(SRC, target)}`),
      );
    expect(direct).toEqual([]);
    // The files through which mapping/ would reach client/ at run time, whatever room they are
    // in: none. The live v1 source gets its reader handed in (a type only), and reads its
    // address and time forms from util/.
    const doors = new Set<string>();
    const reached = new Set<string>();
    const visit = (file: string): void => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const next of valueImports(file)) {
        if (roomOf(next) === 'client') doors.add(relative(SRC, file));
        else visit(next);
      }
    };
    for (const file of graph.keys()) if (roomOf(file) === 'mapping') visit(file);
    expect([...doors].sort()).toEqual([]);
  });

  it('ships no test helpers: every file under src/ is imported by the program (test helpers live under test/)', () => {
    const imported = new Set([...graph.values()].flat());
    // The entry points: the module's two doors (package.json `exports`) and the demo script
    // (bin/crm-ferry.js loads cli/main.ts through the build).
    const entries = new Set(['index.ts', 'sandbox-door.ts', 'demo.ts']);
    const unused = [...graph.keys()]
      .map((file) => relative(SRC, file))
      .filter((file) => !entries.has(file) && !imported.has(join(SRC, file)));
    expect(unused).toEqual([]);
    const helpers = [...graph.keys()]
      .filter((file) => /from ['"]vitest['"]/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    expect(helpers).toEqual([]);
  });

  it("keeps the sandbox and the workbench out of the library: the module's entry reaches neither at run time", () => {
    const reached = new Set<string>();
    const visit = (file: string): void => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const next of valueImports(file)) visit(next);
    };
    visit(join(SRC, 'index.ts'));
    expect(reached.size).toBeGreaterThan(50);
    const servers = [...reached]
      .filter((file) => roomOf(file) === 'sandbox' || roomOf(file) === 'workbench')
      .map((file) => relative(SRC, file));
    expect(servers).toEqual([]);
  });
});

describe('the import graph of the page (web/)', () => {
  const files = sourceFiles(WEB);
  const graph = new Map(files.map((file) => [file, importsOf(file)]));

  it('reads the imports it is meant to: the views, and the page entry that imports them', () => {
    const main = graph.get(join(WEB, 'workbench/main.tsx')) ?? [];
    expect(main).toContain(join(WEB, 'workbench/map.tsx'));
    expect(main).toContain(join(WEB, 'workbench/router.tsx'));
    for (const imports of graph.values())
      for (const target of imports)
        expect(target.startsWith(WEB) ? graph.has(target) : true, `${target} exists`).toBe(true);
  });

  it('has no circles: the views reach the router, never the page entry back', () => {
    const named = circles(graph).map((component) => component.map((file) => relative(WEB, file)));
    expect(named).toEqual([]);
  });

  it("takes from src/ only the workbench's shapes (api.ts): the page is built for the browser", () => {
    const reached = [...graph]
      .flatMap(([file, imports]) =>
        imports
          .filter((target) => target.startsWith(SRC))
          .map((target) => `${relative(WEB, file)} -> ${relative(SRC, target)}`),
      )
      .filter((line) => !line.endsWith('-> workbench/api.ts'));
    expect(reached).toEqual([]);
  });
});
