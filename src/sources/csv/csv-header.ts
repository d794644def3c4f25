export interface HeaderRename {
  /** 1-based position of the column. */
  column: number;
  original: string;
  name: string;
  reason: 'blank' | 'duplicate' | 'reserved';
}

export interface NamedColumns {
  names: string[];
  renames: HeaderRename[];
}

/** Names that would change an object's behaviour if used as a plain property key. */
const RESERVED = new Set(['__proto__']);

/**
 * Turns a header row into unique column names. Names are trimmed; a blank one becomes `columnN`
 * (N its position) and a repeated one gets `_2`, `_3` ... The first use of a name keeps it, and a
 * generated name never takes a name that appears literally elsewhere in the header, so the same
 * header always gives the same names whatever order the renames happen in.
 */
export function nameColumns(header: readonly string[]): NamedColumns {
  const trimmed = header.map((h) => h.trim());
  const literal = new Set(trimmed.filter((h) => h !== '' && !RESERVED.has(h)));
  const used = new Set<string>();
  const names: string[] = [];
  const renames: HeaderRename[] = [];
  // Where the search for a free `base_N` goes on: starting again from 2 for every repeat made
  // 20,000 identical names take 2 * 10^8 look-ups.
  const nextSuffix = new Map<string, number>();
  const free = (base: string, first: number): string => {
    for (let n = Math.max(first, nextSuffix.get(base) ?? first); ; n++) {
      const candidate = n === 1 ? base : `${base}_${n}`;
      if (!used.has(candidate) && !literal.has(candidate)) {
        nextSuffix.set(base, n + 1);
        return candidate;
      }
    }
  };
  trimmed.forEach((name, index) => {
    const column = index + 1;
    let chosen: string;
    let reason: HeaderRename['reason'] | undefined;
    if (name === '') {
      chosen = free(`column${column}`, 1);
      reason = 'blank';
    } else if (RESERVED.has(name)) {
      chosen = free(`${name.replace(/_/g, '')}_column`, 1);
      reason = 'reserved';
    } else if (used.has(name)) {
      chosen = free(name, 2);
      reason = 'duplicate';
    } else {
      chosen = name;
    }
    used.add(chosen);
    names.push(chosen);
    if (reason) renames.push({ column, original: header[index] as string, name: chosen, reason });
  });
  return { names, renames };
}

/** Names for a file without a header row: column1, column2 ... */
export function numberedColumns(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `column${i + 1}`);
}
