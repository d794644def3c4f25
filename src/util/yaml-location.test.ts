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
  const text = ['name: people', 'fields:', '  - to: firstName', '    value: First', '  - to: email', '    value:', 'unknownKey: 1', ''].join('\n');
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
