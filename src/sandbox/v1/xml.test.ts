import { describe, expect, it } from 'vitest';
import { HttpError } from '../http.ts';
import { listNode, parseXmlBody, recordNode, textNode, toJson, toXml } from './xml.ts';

describe('v1 document model', () => {
  const doc = listNode(
    'parties',
    ['person', 'organisation'],
    [
      recordNode('organisation', [
        ['id', 7],
        ['name', 'A & B'],
        ['about', null],
      ]),
      recordNode('person', [
        ['id', 8],
        ['firstName', 'Zoë\u0001'],
        ['contacts', listNode('contacts', ['email'], [], false)],
      ]),
    ],
  );

  it('writes XML with escaping, a size attribute and no empty values', () => {
    expect(toXml(doc)).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<parties size="2"><organisation><id>7</id><name>A &amp; B</name></organisation>' +
        '<person><id>8</id><firstName>Zoë</firstName><contacts/></person></parties>',
    );
  });

  it('writes JSON with string leaves and @attributes, a single item as the object itself, an empty contact kind left out', () => {
    expect(toJson(doc)).toEqual({
      parties: {
        '@size': '2',
        person: { id: '8', firstName: 'Zoë\u0001', contacts: {} },
        organisation: { id: '7', name: 'A & B' },
      },
    });
    expect(toJson(listNode('taskCategories', ['taskCategory'], [textNode('taskCategory', 'Call')]))).toEqual({
      taskCategories: { '@size': '1', taskCategory: 'Call' },
    });
    const two = listNode(
      'taskCategories',
      ['taskCategory'],
      [textNode('taskCategory', 'Call'), textNode('taskCategory', 'Email')],
    );
    expect(toJson(two)).toEqual({ taskCategories: { '@size': '2', taskCategory: ['Call', 'Email'] } });
    // The answer's own list names its kinds even when empty.
    expect(toJson(listNode('kases', ['kase'], []))).toEqual({ kases: { '@size': '0', kase: [] } });
  });
});

describe('parseXmlBody', () => {
  it.each([
    ['<kase><name>x</name></kase>', { kase: { name: 'x' } }],
    ['\uFEFF<?xml version="1.0"?><kase><name>&lt;&amp;&gt; &#233;&#x263A;</name></kase>', { kase: { name: '<&> é☺' } }],
    ['<t><a>1</a><a>2</a><b/></t>', { t: { a: ['1', '2'], b: '' } }],
    ['<t><![CDATA[a < b]]></t>', { t: 'a < b' }],
  ])('reads %s', (xml, expected) => {
    expect(parseXmlBody(Buffer.from(xml))).toEqual(expected);
  });

  it.each([
    ['', /empty/],
    ['<a><b></a>', /malformed at line 1/],
    ['<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>', /DOCTYPE/],
    ['<a><__proto__>1</__proto__></a>', /could not be read/],
  ])('refuses %j with 400', (xml, message) => {
    let caught: unknown;
    try {
      parseXmlBody(xml);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(HttpError);
    expect((caught as HttpError).status).toBe(400);
    expect((caught as HttpError).message).toMatch(message);
  });
});
