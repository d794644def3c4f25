import { describe, expect, it } from 'vitest';
import { parseMapping } from './load.ts';
import { authoredContent, isWritingUser } from './note-author.ts';
import { catalogWanted, createResolver, resolveRecord, type AccountCatalog } from './resolve.ts';
import type { MappedRecord } from './types.ts';

const alex = { username: 'admin', name: 'Alex Admin', email: 'alex@example.com' };

describe('isWritingUser', () => {
  it.each([
    ['the same full name', { name: ' Alex Admin ' }, true],
    ['another full name', { name: 'Kim Keeper' }, false],
    ['the same address, case aside, whatever the name', { name: 'A. Admin', email: 'ALEX@example.com' }, true],
    ['another address, the same name', { name: 'Alex Admin', email: 'other@example.com' }, false],
    ['the same name, another username', { name: 'Alex Admin', username: 'aadmin' }, false],
    ['nothing known', {}, false],
  ])('%s', (_, author, expected) => {
    expect(isWritingUser(author, alex)).toBe(expected);
  });
  it('is nobody when the writing user is unknown', () => {
    expect(isWritingUser({ name: 'Alex Admin' }, null)).toBe(false);
    expect(isWritingUser({ name: 'Alex Admin' }, undefined)).toBe(false);
  });
});

describe('authoredContent', () => {
  it("keeps the writing user's text byte for byte, heads another author's", () => {
    expect(authoredContent(' two\n\nlines ', { name: 'Alex Admin' }, alex)).toBe(' two\n\nlines ');
    expect(authoredContent('text', { name: 'Kim Keeper' }, alex)).toBe('Originally by Kim Keeper\n\ntext');
    expect(
      authoredContent('text', { name: 'Kim Keeper', line: 'Originally by Kim Keeper (kim) on 2024-01-02' }, alex),
    ).toBe('Originally by Kim Keeper (kim) on 2024-01-02\n\ntext');
    expect(authoredContent('', { name: 'Kim Keeper' }, alex)).toBe('Originally by Kim Keeper');
    expect(authoredContent('text', { name: '' }, alex)).toBe('text');
  });
});

/** A note as a mapping makes it, before the resolver. */
const note = (record: Record<string, unknown>): MappedRecord =>
  ({
    kind: 'record',
    entity: 'entry',
    key: '1',
    row: 1,
    location: { row: 2 },
    record,
    names: [],
    refs: [],
    attachments: [],
  }) as unknown as MappedRecord;

const catalog = (writer: AccountCatalog['writer']): AccountCatalog => ({
  users: [],
  teams: [],
  pipelines: [],
  milestones: [],
  activityTypes: [],
  taskCategories: [],
  fieldDefinitions: { parties: [], kases: [], opportunities: [] },
  trackDefinitions: [],
  ...(writer === undefined ? {} : { writer }),
});

describe("the resolver and a note's author", () => {
  it('sends the text as it was for the writing user, headed for another, and never the author fields', () => {
    const own = note({ type: 'note', content: 'Met them', author: 'Alex Admin' });
    expect(resolveRecord(own, createResolver(catalog(alex)))).toEqual([]);
    expect(own.record).toEqual({ type: 'note', content: 'Met them' });
    // Verify also takes the form earlier versions wrote.
    expect(own.contentAlso).toBe('Originally by Alex Admin\n\nMet them');
    const kims = note({
      type: 'note',
      content: 'Met them',
      author: 'Kim Keeper',
      authorLine: 'Originally by Kim (kim)',
    });
    resolveRecord(kims, createResolver(catalog(alex)));
    expect(kims.record).toEqual({ type: 'note', content: 'Originally by Kim (kim)\n\nMet them' });
    expect(kims.contentAlso).toBeUndefined();
  });
  it('heads every named author when the writing user was not read or the service has none', () => {
    for (const writer of [undefined, null]) {
      const own = note({ content: 'Met them', author: 'Alex Admin' });
      resolveRecord(own, createResolver(catalog(writer)));
      expect(own.record).toEqual({ content: 'Originally by Alex Admin\n\nMet them' });
    }
  });
  it('reads the writing user only for a note mapping that names an author', () => {
    const mapping = (fields: string) =>
      parseMapping(
        `version: 1\nname: n\nentity: entry\nsource: {format: csv}\nkey: "{{id}}"\nfields:\n${fields}`,
        'n.yaml',
      );
    expect(catalogWanted([mapping('  - {to: content, value: {column: text}}')]).writer).toBeUndefined();
    expect(
      catalogWanted([mapping('  - {to: content, value: {column: text}}\n  - {to: author, value: {column: by}}')])
        .writer,
    ).toBe(true);
  });
});

describe('a mapping with authorLine', () => {
  it('is refused without an author, saying what to add', async () => {
    const { compileMapping } = await import('./compile.ts');
    const text =
      'version: 1\nentity: entry\nkey: "{{id}}"\nfields:\n  - {to: content, value: {column: text}}\n  - {to: authorLine, value: {column: line}}\n';
    await expect(
      compileMapping(parseMapping(text, '/maps/notes.yaml'), { file: '/maps/notes.yaml' }),
    ).rejects.toMatchObject({
      code: 'MAPPING_INVALID',
      location: { yamlPath: 'fields[1].to' },
      hint: expect.stringContaining('`to: author`'),
    });
  });
});
