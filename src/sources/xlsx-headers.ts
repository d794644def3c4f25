/** What happened to one header name while making the set unique. */
export interface HeaderFix {
  kind: 'blank' | 'renamed';
  /** 1-based column. */
  column: number;
  original: string;
  name: string;
}

/**
 * Makes column names from header cells the way the CSV reader does: a blank cell is named after
 * its column (`column3`), and a repeated name gets `_2`, `_3`... (`Email`, `Email_2`), skipping
 * any suffix already taken by a real header.
 * @param headers header texts indexed by 1-based column; holes are blank headers.
 */
export function uniqueHeaderNames(headers: ReadonlyArray<string | undefined>, width: number): { names: string[]; fixes: HeaderFix[] } {
  const fixes: HeaderFix[] = [];
  const taken = new Set<string>();
  const proposed: string[] = [];
  for (let column = 1; column <= width; column++) {
    const text = headers[column] ?? '';
    if (text === '') {
      const name = `column${column}`;
      proposed[column] = name;
      fixes.push({ kind: 'blank', column, original: '', name });
    } else {
      proposed[column] = text;
    }
  }
  for (let column = 1; column <= width; column++) taken.add(proposed[column] ?? '');
  const used = new Set<string>();
  const nextSuffix = new Map<string, number>();
  const names: string[] = [];
  for (let column = 1; column <= width; column++) {
    const base = proposed[column] ?? `column${column}`;
    let name = base;
    if (used.has(name)) {
      // Go on from the last suffix of this name: 20,000 repeats would otherwise search 2 * 10^8 times.
      let suffix = nextSuffix.get(base) ?? 2;
      while (used.has(`${base}_${suffix}`) || taken.has(`${base}_${suffix}`)) suffix++;
      name = `${base}_${suffix}`;
      nextSuffix.set(base, suffix + 1);
      fixes.push({ kind: 'renamed', column, original: base, name });
    }
    used.add(name);
    names[column] = name;
  }
  return { names, fixes };
}
