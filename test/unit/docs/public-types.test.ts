import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * What a program sees of crm-ferry's doors (package.json `exports`): every named type a public
 * signature uses (an option, a summary, an event, a field's type, through any depth) is exported
 * by name from the door it is reached through, so that a program can write it down; and no `any`
 * is among them, so that the declarations check what a program passes.
 */
const ROOT = resolve(import.meta.dirname, '../../..');
const DOORS = { 'crm-ferry': join(ROOT, 'src/index.ts'), 'crm-ferry/sandbox': join(ROOT, 'src/sandbox-door.ts') };

const config = ts.getParsedCommandLineOfConfigFile(
  join(ROOT, 'tsconfig.json'),
  {},
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
);
const program = ts.createProgram(Object.values(DOORS), config?.options ?? {});
const checker = program.getTypeChecker();

const inSource = (declaration: ts.Declaration): boolean => {
  const file = declaration.getSourceFile().fileName;
  return file.startsWith(join(ROOT, 'src')) && !file.endsWith('.d.ts');
};

/** The named types of src/ a door's exports reach, and where an `any` is met. */
function reach(door: string): { exported: Set<ts.Symbol>; reached: Map<ts.Symbol, string>; anys: string[] } {
  const source = program.getSourceFile(door) as ts.SourceFile;
  const module = checker.getSymbolAtLocation(source) as ts.Symbol;
  const exported = new Set<ts.Symbol>();
  const reached = new Map<ts.Symbol, string>();
  const anys: string[] = [];
  const seen = new Set<ts.Type>();
  const named = (symbol: ts.Symbol | undefined, path: string): void => {
    const declaration = symbol?.declarations?.[0];
    if (!symbol || !declaration || !inSource(declaration)) return;
    // A type alias its module keeps to itself (\`type Body = Record<string, unknown>\`) only
    // spells out a shape a program can write too; everything else is to be named.
    const local =
      ts.isTypeAliasDeclaration(declaration) && !(ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Export);
    if (
      !local &&
      (ts.isInterfaceDeclaration(declaration) ||
        ts.isTypeAliasDeclaration(declaration) ||
        ts.isClassDeclaration(declaration) ||
        ts.isEnumDeclaration(declaration))
    ) {
      if (!reached.has(symbol)) reached.set(symbol, path);
    }
  };
  const visit = (type: ts.Type, path: string, depth: number, ofLibrary = false): void => {
    if (type.flags & ts.TypeFlags.Any) {
      // A default of node's or TypeScript's own generics (AsyncGenerator's TReturn) is theirs.
      if (!ofLibrary) anys.push(path);
      return;
    }
    if (seen.has(type) || depth > 12) return;
    seen.add(type);
    named(type.aliasSymbol, path);
    for (const argument of type.aliasTypeArguments ?? []) visit(argument, `${path}<>`, depth + 1);
    const symbol = type.getSymbol();
    named(symbol, path);
    if (type.isUnionOrIntersection()) for (const member of type.types) visit(member, path, depth + 1);
    const object = type as ts.ObjectType;
    if (type.flags & ts.TypeFlags.Object && object.objectFlags & ts.ObjectFlags.Reference) {
      const target = (object as ts.TypeReference).target.getSymbol()?.declarations?.[0];
      for (const argument of checker.getTypeArguments(object as ts.TypeReference))
        visit(argument, `${path}<>`, depth + 1, target !== undefined && !inSource(target));
    }
    // Types of node, zod and the other packages are theirs to name (their arguments, above, are
    // crm-ferry's); only crm-ferry's own are followed inside.
    const declaration = symbol?.declarations?.[0] ?? type.aliasSymbol?.declarations?.[0];
    if (declaration && !inSource(declaration)) return;
    if (type.flags & ts.TypeFlags.Object) {
      for (const property of type.getProperties()) {
        const propertyDeclaration = property.valueDeclaration ?? property.declarations?.[0];
        if (propertyDeclaration && !inSource(propertyDeclaration)) continue;
        if (
          property.getName().startsWith('#') ||
          (propertyDeclaration &&
            ts.getCombinedModifierFlags(propertyDeclaration) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected))
        )
          continue;
        visit(checker.getTypeOfSymbol(property), `${path}.${property.getName()}`, depth + 1);
      }
      for (const signature of [...type.getCallSignatures(), ...type.getConstructSignatures()]) {
        for (const parameter of signature.getParameters())
          visit(checker.getTypeOfSymbol(parameter), `${path}(${parameter.getName()})`, depth + 1);
        visit(signature.getReturnType(), `${path}()`, depth + 1);
      }
      for (const info of checker.getIndexInfosOfType(type)) visit(info.type, `${path}[]`, depth + 1);
    }
  };
  for (const symbol of checker.getExportsOfModule(module)) {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    exported.add(target);
    const name = symbol.getName();
    if (target.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias))
      visit(checker.getDeclaredTypeOfSymbol(target), name, 0);
    if (target.flags & ts.SymbolFlags.Value) visit(checker.getTypeOfSymbol(target), name, 0);
    if (target.flags & ts.SymbolFlags.Class) visit(checker.getDeclaredTypeOfSymbol(target), name, 0);
  }
  return { exported, reached, anys };
}

describe.each(Object.entries(DOORS))('the public types of %s', (_name, door) => {
  const { exported, reached, anys } = reach(door);

  it('export by name every type of crm-ferry a public signature uses', () => {
    expect(reached.size).toBeGreaterThan(door.endsWith('index.ts') ? 40 : 2);
    const missing = [...reached]
      .filter(([symbol]) => !exported.has(symbol))
      .map(
        ([symbol, path]) =>
          `${symbol.getName()} (${relative(dirname(door), symbol.declarations?.[0]?.getSourceFile().fileName ?? '')}, at ${path})`,
      )
      .sort();
    expect(missing).toEqual([]);
  });

  it('hold no `any`', () => {
    expect([...new Set(anys)].sort()).toEqual([]);
  });
});
