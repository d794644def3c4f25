import { describe, expect, it } from 'vitest';
import { HttpError } from './http.ts';
import { normaliseScope, secretsEqual, single } from './oauth-params.ts';
import { escapeHtml } from './oauth-page.ts';

describe('normaliseScope', () => {
  it.each([
    [undefined, 'read write'],
    ['', 'read write'],
    ['  ', 'read write'],
    ['read', 'read'],
    ['read write', 'read write'],
    ['write read', 'read write'],
    ['read  write read', 'read write'],
    ['user_preference write read', 'read write user_preference'],
    ['write', null],
    ['read user_preference', null],
    ['read write admin', null],
    ['READ', null],
  ])('turns %j into %j', (raw, expected) => {
    expect(normaliseScope(raw)).toBe(expected);
  });
});

describe('secretsEqual', () => {
  it.each([
    ['s3cret', 's3cret', true],
    ['s3cret', 's3cre', false],
    ['', '', true],
    ['', 'x', false],
    ['ä', 'ä', true],
    ['a'.repeat(100), 'a'.repeat(99), false],
  ])('compares %j and %j as %s', (a, b, expected) => {
    expect(secretsEqual(a, b)).toBe(expected);
  });
});

describe('single', () => {
  it('reads strings and treats empty values as absent', () => {
    expect(single({ a: 'x' }, 'a')).toBe('x');
    expect(single({ a: '' }, 'a')).toBeUndefined();
    expect(single({}, 'a')).toBeUndefined();
  });

  it.each([
    [['x', 'y'], 'given more than once'],
    [42, 'must be a string'],
    [{ nested: true }, 'must be a string'],
  ])('refuses %j with invalid_request', (value, text) => {
    let thrown: unknown;
    try {
      single({ a: value }, 'a');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(HttpError);
    const error = thrown as HttpError;
    expect(error.status).toBe(400);
    expect(error.body.error).toBe('invalid_request');
    expect(String(error.body.error_description)).toContain(text);
  });
});

describe('escapeHtml', () => {
  it('escapes every character that could leave text or an attribute', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });
});
