import { describe, expect, it } from 'vitest';
import type { MappedRecord } from '../mapping/types.ts';
import { lookUpRef, ReferenceBook, unresolvedLink } from './references.ts';

const ref = (steps: string | string[], key: string) => ({
  path: ['party'],
  steps: typeof steps === 'string' ? [steps] : steps,
  key,
  yamlPath: 'fields[1]',
});

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
    expect(book.checkRefs([ref('people', 'C-17')])[0]?.message).toBe(
      "the row with key 'C-17' in step people was rejected",
    );
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

  describe('a link to several steps', () => {
    const party = ['people', 'organisations'];

    it('resolves from either step', () => {
      const book = new ReferenceBook();
      book.addValid('organisations', '201');
      book.addValid('people', '101');
      expect(book.checkRefs([ref(party, '101'), ref(party, '201')])).toEqual([]);
    });

    it('rejects a key two of the steps have, naming both', () => {
      const book = new ReferenceBook();
      book.addValid('organisations', '7');
      book.addValid('people', '7');
      expect(book.checkRefs([ref(party, '7')])).toEqual([
        {
          field: 'fields[1]',
          code: 'MAPPING_REFERENCE',
          message:
            "the key '7' is in steps people and organisations, so the link is ambiguous; keys must be unique across the steps one `ref` names",
        },
      ]);
    });

    it('counts a rejected row as having its key, since fixing it would make the link ambiguous', () => {
      const book = new ReferenceBook();
      book.addValid('organisations', '7');
      book.addRejected('people', '7');
      expect(book.checkRefs([ref(party, '7')])[0]?.message).toContain('is in steps people and organisations');
    });

    it('says the linked row was rejected when only one step has it', () => {
      const book = new ReferenceBook();
      book.addRejected('organisations', '201');
      expect(book.checkRefs([ref(party, '201')])[0]?.message).toBe(
        "the row with key '201' in step organisations was rejected",
      );
    });

    it('names every step it looked in when none has the key', () => {
      const book = new ReferenceBook();
      book.addValid('people', '101');
      expect(book.checkRefs([ref(['people', 'organisations', 'leads'], '999')])[0]?.message).toBe(
        "no row with key '999' in steps people, organisations or leads",
      );
    });

    it('ignores steps the link does not name', () => {
      const book = new ReferenceBook();
      book.addValid('people', '7');
      book.addValid('deals', '7');
      expect(book.checkRefs([ref(party, '7')])).toEqual([]);
    });
  });
});

describe('lookUpRef', () => {
  const ids = new Map([
    ['people/101', 1],
    ['organisations/201', 2],
    ['people/7', 3],
    ['organisations/7', 4],
  ]);
  const find = (step: string, key: string): number | undefined => ids.get(`${step}/${key}`);

  it.each([
    ['in the first step', ['people', 'organisations'], '101', { status: 'found', step: 'people', value: 1 }],
    ['in the second step', ['people', 'organisations'], '201', { status: 'found', step: 'organisations', value: 2 }],
    ['in no step', ['people', 'organisations'], '999', { status: 'missing' }],
    ['in a step the link does not name', ['people'], '201', { status: 'missing' }],
    [
      "in both, listed in the link's order with the first step's value",
      ['organisations', 'people'],
      '7',
      { status: 'ambiguous', steps: ['organisations', 'people'], value: 4 },
    ],
  ])('a key %s', (_title, steps, key, expected) => {
    expect(lookUpRef({ steps, key }, find)).toEqual(expected);
  });

  it('asks every step, so a shared key is found even after a hit', () => {
    const asked: string[] = [];
    lookUpRef({ steps: ['people', 'organisations'], key: '101' }, (step, key) => {
      asked.push(step);
      return find(step, key);
    });
    expect(asked).toEqual(['people', 'organisations']);
  });
});

describe('unresolvedLink', () => {
  it('leaves only its own element of a list (an additional contact), with a warning; a plain link goes whole', () => {
    const record: Record<string, unknown> = {
      name: 'Rollout',
      party: { id: 7 },
      parties: [{ id: 12 }, { id: null }],
      organisation: { id: null },
    };
    const mapped = {
      kind: 'record',
      entity: 'kase',
      key: 'K1',
      row: 1,
      location: { file: 'k.xml', row: 1 },
      record,
      names: [],
      refs: [],
      attachments: [],
      valuesOf: () => ({}),
    } as MappedRecord;
    expect(
      unresolvedLink(
        mapped,
        { path: ['parties', 1, 'id'], steps: ['people'], key: '999', yamlPath: 'fields[3]' },
        'no such person',
      ),
    ).toBeNull();
    expect(record.parties).toEqual([{ id: 12 }, { id: null }]);
    expect(
      unresolvedLink(
        mapped,
        { path: ['organisation', 'id'], steps: ['orgs'], key: 'X', yamlPath: 'fields[4]' },
        'no such organisation',
      ),
    ).toBeNull();
    expect(record).not.toHaveProperty('organisation');
    expect(mapped.warnings?.map((w) => [w.code, w.field, w.value])).toEqual([
      ['LINK_UNRESOLVED', 'parties', '999'],
      ['LINK_UNRESOLVED', 'organisation', 'X'],
    ]);
  });
});
