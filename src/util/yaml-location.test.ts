import { LineCounter, parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { formatYamlPath, parseLocatedYaml, yamlLineOf } from './yaml-location.ts';

describe('formatYamlPath', () => {
  it.each([
    [['fields', 3, 'value', 'transform', 1], 'fields[3].value.transform[1]'],
    [['steps', 1, 'mapping'], 'steps[1].mapping'],
    [[0, 'a'], '[0].a'],
    [[], ''],
  ])('%j -> %s', (path, written) => {
    expect(formatYamlPath(path)).toBe(written);
  });
});

describe('yamlLineOf', () => {
  const text = [
    'name: people',
    'fields:',
    '  - to: firstName',
    '    value: First',
    '  - to: email',
    '    value:',
    'unknownKey: 1',
    '',
  ].join('\n');
  const counter = new LineCounter();
  const document = parseDocument(text, { lineCounter: counter });

  it.each([
    [[], false, 1],
    [['fields', 1, 'to'], false, 5],
    [['fields', 0, 'value'], false, 4],
    // A key without a value still has a line.
    [['fields', 1, 'value'], false, 6],
    // What is not there: the line of the nearest parent that is.
    [['fields', 7, 'to'], false, 3],
    [['fields', 0, 'nothing'], false, 3],
    [['unknownKey'], true, 7],
  ] as const)('%j (at the key: %s) is on line %i', (path, atKey, line) => {
    expect(yamlLineOf(document, counter, path, atKey)).toBe(line);
  });

  it('is what a parsed file answers', () => {
    const located = parseLocatedYaml(text, 'mapping.yaml', 'MAPPING_INVALID');
    expect(located.lineOf(['fields', 1, 'to'])).toBe(5);
  });
});

describe('parseLocatedYaml refuses tags it does not know', () => {
  it.each([
    ['steps:\n  - mapping: !include /etc/passwd\n', 2, '!include'],
    ['version: 1\nrun: !!js/function "function () { return 1 }"\n', 2, '!!js/function'],
  ])('%j: the tag and its line, instead of its text as a value', (text, line, tag) => {
    let caught: unknown;
    try {
      parseLocatedYaml(text, 'plan.yaml', 'PLAN_INVALID');
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: 'PLAN_INVALID', location: { file: 'plan.yaml', line } });
    expect((caught as Error).message).toBe(
      `unknown YAML tag ${tag}: crm-ferry reads plain YAML values only (no tag runs code or reads a file); remove the tag and write the value itself`,
    );
  });

  it('still reads the standard tags', () => {
    expect(parseLocatedYaml('a: !!str 5\nb: !!int "7"\n', 'plan.yaml', 'PLAN_INVALID').value).toEqual({ a: '5', b: 7 });
  });
});
