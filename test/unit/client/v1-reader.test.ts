import { describe, expect, it } from 'vitest';
import { FerryError } from '../../../src/errors/index.ts';
import { isV1LiveInput, parseV1LiveInput, v1FilterTime } from '../../../src/client/v1-reader.ts';
import { parseSince, v1Format } from '../../../src/cli/flags.ts';

describe('live v1 inputs', () => {
  it.each([
    ['v1+https://old.example.com', { baseUrl: 'https://old.example.com', list: undefined }],
    ['v1+https://old.example.com/', { baseUrl: 'https://old.example.com', list: undefined }],
    ['v1+http://127.0.0.1:8787/api', { baseUrl: 'http://127.0.0.1:8787', list: undefined }],
    ['v1+https://old.example.com/api/kase', { baseUrl: 'https://old.example.com', list: 'kase' }],
    ['V1+HTTPS://old.example.com/api/tasks/', { baseUrl: 'https://old.example.com', list: 'tasks' }],
  ])('%s', (input, expected) => {
    expect(isV1LiveInput(input)).toBe(true);
    expect(parseV1LiveInput(input)).toEqual(expected);
  });

  it.each([
    ['v1+https://old.example.com/api/notes', /names no list it reads/],
    ['v1+https://old.example.com/crm', /names no list it reads/],
    ['v1+https://old.example.com/api/party?start=5', /has a query or fragment/],
    ['v1+https://me:secret@old.example.com', /holds a user name or password/],
    ['v1+ftp://old.example.com', /is not a live v1 source/],
  ])('refuses %s', (input, message) => {
    let error: unknown;
    try {
      parseV1LiveInput(input);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(FerryError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('secret');
  });

  it('tells files from live sources', () => {
    expect(isV1LiveInput('samples/v1/parties.xml')).toBe(false);
    expect(isV1LiveInput('v1+parties.xml')).toBe(false);
  });

  it('writes lastmodified as the v1 lists take it, in UTC', () => {
    expect(v1FilterTime(new Date('2024-05-01T12:34:56.789+02:00'))).toBe('20240501T103456');
    expect(() => v1FilterTime(new Date('nonsense'))).toThrow(/not a date/);
  });

  it.each([
    ['2024-05-01', '2024-05-01T00:00:00.000Z'],
    ['2024-05-01T12:00:00Z', '2024-05-01T12:00:00.000Z'],
    ['2024-05-01T12:00+02:00', '2024-05-01T10:00:00.000Z'],
  ])('--since %s', (text, iso) => {
    expect(parseSince(text)?.toISOString()).toBe(iso);
  });

  it.each(['yesterday', '2024-13-01', '2024-05-01T12:00:00', '1714521600'])('refuses --since %s', (text) => {
    expect(() => parseSince(text)).toThrow(/--since takes a date or a time with its zone/);
  });

  it('takes --v1-format xml or json only', () => {
    expect(v1Format(undefined)).toBe('xml');
    expect(v1Format('json')).toBe('json');
    expect(() => v1Format('csv')).toThrow(/--v1-format takes xml or json, got "csv"/);
  });
});
