import { describe, expect, it } from 'vitest';
import { isMadeKey, linkedByName, MadeByName, madeKey, shownKey } from './made-by-name.ts';

/** A step as the registry reads it: its journal's rows by key, and the ids they hold. */
function step(rows: Record<string, number | null>): {
  journal: { rows: Map<string, { id: number | null }> };
  taken: Set<number>;
} {
  const map = new Map(Object.entries(rows).map(([key, id]) => [key, { id }]));
  return { journal: { rows: map }, taken: new Set(Object.values(rows).filter((id): id is number => id !== null)) };
}

describe('organisations made by name', () => {
  it('keys no source row can have, found again by the name as the service compares it', () => {
    expect(madeKey('  Groothandel Jansen ')).toBe(madeKey('groothandel jansen'));
    expect(isMadeKey(madeKey('Acme'))).toBe(true);
    expect(isMadeKey('made:organisation:acme')).toBe(false);
    expect(shownKey(madeKey('Acme Ltd'))).toBe('organisation made by name: acme ltd');
    expect(shownKey('C-17')).toBe('C-17');
  });

  it('a link by name is an organisation given by its name alone', () => {
    expect(linkedByName('party', { organisation: { name: 'Acme' } })).toBe('Acme');
    expect(linkedByName('party', { organisation: { id: 5 } })).toBeUndefined();
    expect(linkedByName('party', { organisation: { name: '  ' } })).toBeUndefined();
    expect(linkedByName('kase', { organisation: { name: 'Acme' } })).toBeUndefined();
  });

  it('a row of that organisation takes the one made by name, once; one a source row holds is not free', () => {
    const contacts = step({ P1: 10, [madeKey('Acme')]: 20, [madeKey('Globex')]: 30 });
    const companies = step({ C9: 30 });
    const made = new MadeByName([contacts, companies]);
    expect(made.take('ACME')).toBe(20);
    // Taken by the row before: a second row of that name makes its own.
    expect(made.take('Acme')).toBeUndefined();
    // Globex is the record of company C9 already.
    expect(made.take('Globex')).toBeUndefined();
    expect(made.take('Initech')).toBeUndefined();
  });
});
