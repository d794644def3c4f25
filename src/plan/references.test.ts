import { describe, expect, it } from 'vitest';
import { ReferenceBook } from './references.ts';

const ref = (step: string, key: string) => ({ path: ['party'], step, key, yamlPath: 'fields[1]' });

describe('ReferenceBook', () => {
  it('accepts a link to a key the step produced', () => {
    const book = new ReferenceBook();
    book.addValid('people', 'C-17');
    expect(book.checkRefs([ref('people', 'C-17')])).toEqual([]);
    expect(book.validCount('people')).toBe(1);
  });

  it('rejects a link to a key the step did not produce, naming key and step', () => {
    const book = new ReferenceBook();
    book.addValid('people', 'C-16');
    expect(book.checkRefs([ref('people', 'C-17')])).toEqual([
      { field: 'fields[1]', code: 'MAPPING_REFERENCE', message: "no row with key 'C-17' in step people" },
    ]);
  });

  it('says when the linked row exists but was rejected', () => {
    const book = new ReferenceBook();
    book.addRejected('people', 'C-17');
    expect(book.checkRefs([ref('people', 'C-17')])[0]?.message).toBe("the row with key 'C-17' in step people was rejected");
  });

  it('keeps steps apart: a key of one step does not satisfy a link to another', () => {
    const book = new ReferenceBook();
    book.addValid('orgs', 'C-17');
    expect(book.checkRefs([ref('people', 'C-17')])).toHaveLength(1);
  });

  it('reports every broken link of a record', () => {
    const book = new ReferenceBook();
    expect(book.checkRefs([ref('people', 'a'), ref('deals', 'b')]).map((p) => p.message)).toEqual([
      "no row with key 'a' in step people",
      "no row with key 'b' in step deals",
    ]);
  });

  it('finds a duplicate key within a step, whether the first row was valid or rejected', () => {
    const book = new ReferenceBook();
    expect(book.checkKey('people', 'C-1')).toBeUndefined();
    book.addValid('people', 'C-1');
    book.addRejected('people', 'C-2');
    expect(book.checkKey('people', 'C-1')).toEqual({
      field: 'key',
      code: 'MAPPING_VALUE',
      message: "duplicate key 'C-1': an earlier row of step people has the same key; keys must be unique within a step",
    });
    expect(book.checkKey('people', 'C-2')?.code).toBe('MAPPING_VALUE');
    expect(book.checkKey('orgs', 'C-1')).toBeUndefined();
  });
});
