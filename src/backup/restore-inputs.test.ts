import { describe, expect, it } from 'vitest';
import { carriedContent, creatorAsWritten, onRecord, writtenByWriter } from './restore-inputs.ts';

describe('carriedContent: what a note says for an entry the interface cannot create', () => {
  it.each([
    ['a note is written as it is', { type: 'note', content: 'Met' }, null],
    [
      'an email: sender, recipients, subject, the other parties it was filed on',
      {
        type: 'email',
        content: 'See attached.',
        subject: 'Quote',
        parties: [
          { id: 1, name: 'Acme' },
          { id: 2, firstName: 'Ann', lastName: 'Smith' },
        ],
        participants: [
          { address: 'ann@example.test', name: 'Ann Smith', role: 'FROM' },
          { address: 'sales@example.test', name: '', role: 'TO' },
          { address: 'bob@example.test', name: 'Bob', role: 'TO' },
        ],
      },
      'Originally an email\nFrom: Ann Smith <ann@example.test>\nTo: sales@example.test, Bob <bob@example.test>\nSubject: Quote\nAlso filed on: Ann Smith\n\nSee attached.',
    ],
    [
      'an email on a project names every party: the note goes on the project',
      {
        type: 'email',
        content: 'x',
        subject: '',
        kase: { id: 9 },
        parties: [{ id: 1, name: 'Acme' }],
        participants: [],
      },
      'Originally an email\nAlso filed on: Acme\n\nx',
    ],
    [
      'an email without participants or subject',
      { type: 'email', content: 'Hello', parties: [{ id: 1, name: 'Acme' }] },
      'Originally an email\n\nHello',
    ],
    [
      'the entry of a completed task',
      { type: 'task', content: 'Call back\n\nabout the quote' },
      'Originally the entry of a completed task\n\nCall back\n\nabout the quote',
    ],
  ])('%s', (_name, entry, expected) => {
    expect(carriedContent(entry)).toBe(expected);
  });
});

describe('onRecord: the record an entry or task goes on', () => {
  it.each([
    [
      'a project before its party',
      { kase: { id: 3 }, party: { id: 1 } },
      { partyId: null, kaseId: 3, opportunityId: null },
    ],
    [
      'an opportunity before its party',
      { opportunity: { id: 4 }, party: { id: 1 } },
      { partyId: null, kaseId: null, opportunityId: 4 },
    ],
    ['a party', { party: { id: 1 }, kase: null }, { partyId: 1, kaseId: null, opportunityId: null }],
    ["an email's first party", { parties: [{ id: 7 }, { id: 8 }] }, { partyId: 7, kaseId: null, opportunityId: null }],
  ])('%s', (_name, record, expected) => {
    expect(onRecord(record)).toEqual(expected);
  });
});

describe('writtenByWriter: whether the restoring user wrote a note', () => {
  const users = [
    { id: 7, username: 'admin', name: 'Alex Admin', email: 'Alex@Example.com' },
    { id: 8, username: 'kim', name: 'Kim Keeper', email: undefined },
  ];
  const alex = { id: 7, username: 'admin', name: 'Alex Admin' };
  it.each([
    [
      'the same address, another username in the target',
      alex,
      { username: 'alex', name: 'Alex A.', email: 'alex@example.com' },
      true,
    ],
    [
      'another address, the same name and username',
      alex,
      { username: 'admin', name: 'Alex Admin', email: 'other@example.com' },
      false,
    ],
    [
      'no address known: the same name and username',
      { id: 8, username: 'kim', name: 'Kim Keeper' },
      { username: 'kim', name: 'Kim Keeper', email: 'kim@example.com' },
      true,
    ],
    [
      'no address known: the same name, another username',
      { id: 8, username: 'kim', name: 'Kim Keeper' },
      { username: 'kkeeper', name: 'Kim Keeper' },
      false,
    ],
    [
      'no address known: another name',
      { id: 8, username: 'kim', name: 'Kim Keeper' },
      { username: 'kim', name: 'Kim K.' },
      false,
    ],
    ['no creator', null, { username: 'kim', name: 'Kim Keeper' }, false],
  ])('%s', (_, creator, writer, expected) => {
    expect(writtenByWriter(creator, writer, users)).toBe(expected);
  });
  it('is false when the writing user is unknown (the service has no GET /users/current)', () => {
    expect(writtenByWriter(alex, null, users)).toBe(false);
  });
});

describe("creatorAsWritten: a note's creator in the restore's entries file", () => {
  const users = [
    { id: 7, username: 'admin', name: 'Alex Admin', email: 'alex@example.com' },
    { id: 9, username: 'alex2', name: 'Alex Admin', email: 'other@example.com' },
    { id: 8, username: 'kim', name: 'Kim Keeper', email: undefined },
  ];
  const writer = { username: 'admin', name: 'Alex Admin', email: 'alex@example.com' };
  it("names nobody for the writing user's note, so that its text stays as it was", () => {
    expect(creatorAsWritten({ id: 7, username: 'admin', name: 'Alex Admin' }, writer, users)).toBeNull();
  });
  it('keeps another author as they are', () => {
    expect(creatorAsWritten({ id: 8, username: 'kim', name: 'Kim Keeper' }, writer, users)).toEqual({
      id: 8,
      username: 'kim',
      name: 'Kim Keeper',
    });
  });
  it("names another user of the writing user's full name with their username, so that the mapping still heads the note", () => {
    expect(creatorAsWritten({ id: 9, username: 'alex2', name: 'Alex Admin' }, writer, users)).toEqual({
      id: 9,
      username: 'alex2',
      name: 'Alex Admin (alex2)',
    });
  });
});
