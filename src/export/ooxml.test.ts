import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readXlsx } from '../sources/xlsx/xlsx.ts';
import { serialToDate } from '../files/index.ts';
import { cellXml, serialText } from './ooxml.ts';
import { openWriter } from './writers.ts';

const dir = mkdtempSync(join(tmpdir(), 'ferry-ooxml-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The serial as Date.parse gives it: what the writer wrote before it read the digits itself. */
function parsedSerial(text: string, instant: boolean): number {
  return Date.parse(instant ? text : `${text}T00:00:00Z`) / 86_400_000 + 25_569;
}

/** A serial read back as the spreadsheet readers do (to the millisecond) must give the same instant. */
function expectSameInstant(text: string, instant: boolean): void {
  const serial = serialText(text, instant);
  expect(serial, text).not.toBeNull();
  expect(Math.abs(Number(serial) - parsedSerial(text, instant)), text).toBeLessThan(1e-9);
  expect(serialToDate(Number(serial), false).getTime(), text).toBe(Date.parse(instant ? text : `${text}T00:00:00Z`));
}

describe('serialText', () => {
  it('gives the serial of a date and of a whole-second instant as Date.parse does', () => {
    for (const day of [
      '1899-12-30',
      '1900-01-01',
      '1900-03-01',
      '1970-01-01',
      '2000-02-29',
      '2023-12-31',
      '2024-02-29',
      '9999-12-31',
      '0100-03-01',
    ]) {
      if (Date.parse(`${day}T00:00:00Z`) >= Date.parse('1899-12-30T00:00:00Z')) expectSameInstant(day, false);
    }
    expect(serialText('1970-01-01', false)).toBe('25569');
    expect(serialText('2024-01-01T12:00:00Z', true)).toBe('45292.5');
    for (const instant of [
      '2024-01-01T00:00:00Z',
      '2024-01-01T00:00:01Z',
      '2024-02-29T23:59:59Z',
      '1999-12-31T23:59:59Z',
      '2038-01-19T03:14:07Z',
    ]) {
      expectSameInstant(instant, true);
    }
    // A day past its month's end runs on, as Date.parse takes it.
    expectSameInstant('2023-02-29', false);
    expectSameInstant('2024-02-30T10:00:00Z', true);
    expectSameInstant('2024-04-31', false);
  });

  it('agrees with Date.parse over two centuries of instants', () => {
    // A fixed walk, not a random one: the same instants every run.
    let seed = 12_345;
    const from = Date.parse('1900-01-01T00:00:00Z');
    const span = Date.parse('2100-01-01T00:00:00Z') - from;
    for (let i = 0; i < 4_000; i += 1) {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      const iso = new Date(from + Math.floor(((seed / 2 ** 31) * span) / 1000) * 1000).toISOString();
      expectSameInstant(`${iso.slice(0, 19)}Z`, true);
      expectSameInstant(iso.slice(0, 10), false);
    }
  });

  it('leaves every other shape, and days before the spreadsheet epoch, to Date.parse', () => {
    for (const instant of [
      '2024-01-01T10:00:00.500Z',
      '2024-01-01T10:00:00+01:00',
      '2024-01-01T10:00Z',
      '2024-01-01T24:00:00Z',
      '2024-01-01T10:60:00Z',
      '2024-01-01 10:00:00Z',
      '2024-1-01T10:00:00Z',
    ]) {
      expect(serialText(instant, true), instant).toBeNull();
    }
    for (const day of [
      '1899-12-29',
      '2024-13-01',
      '2024-00-10',
      '2024-01-00',
      '2024-01-32',
      '20x4-01-01',
      '2024/01/01',
    ])
      expect(serialText(day, false), day).toBeNull();
  });
});

describe('cellXml', () => {
  it('writes an instant of another shape through Date.parse, and one it cannot read as its text', () => {
    expect(cellXml('<c r="B2"', { timestamp: '2024-01-01T10:00:00.500Z' }, false)).toBe(
      `<c r="B2" s="3"><v>${parsedSerial('2024-01-01T10:00:00.500Z', true)}</v></c>`,
    );
    expect(cellXml('<c r="B2"', { timestamp: '2024-01-01T11:00:00+01:00' }, false)).toBe(
      `<c r="B2" s="3"><v>${parsedSerial('2024-01-01T10:00:00Z', true)}</v></c>`,
    );
    expect(cellXml('<c r="B2"', { date: '2024-02-31x' }, false)).toBe(
      '<c r="B2" t="inlineStr"><is><t>2024-02-31x</t></is></c>',
    );
  });

  it('writes texts, numbers and yes/no after the opening it is given', () => {
    expect(cellXml('<c r="C9"', 'a  b', false)).toBe(
      '<c r="C9" t="inlineStr"><is><t xml:space="preserve">a  b</t></is></c>',
    );
    expect(cellXml('<c r="C9"', '=1+1', false)).toBe('<c r="C9" t="inlineStr" s="4"><is><t>=1+1</t></is></c>');
    expect(cellXml('<c r="C9"', '=1+1', true)).toBe('<c r="C9" t="inlineStr"><is><t>=1+1</t></is></c>');
    expect(cellXml('<c r="C9"', 2.5, false)).toBe('<c r="C9"><v>2.5</v></c>');
    expect(cellXml('<c r="C9"', Number.NaN, false)).toBe('');
    expect(cellXml('<c r="C9"', false, false)).toBe('<c r="C9" t="b"><v>0</v></c>');
    expect(cellXml('<c r="C9"', null, false)).toBe('');
  });

  it('dates and instants come back from the written file as the same instants', async () => {
    const out = join(dir, 'stamps.xlsx');
    const stamps = ['2024-02-29T23:59:59Z', '1999-12-31T00:00:01Z', '2026-11-27T20:17:44Z', '2024-01-01T10:00:00.123Z'];
    const writer = openWriter('xlsx', out, ['day', 'at'], { plain: false, raw: false, stdout: process.stdout });
    for (const stamp of stamps) await writer.write([{ date: stamp.slice(0, 10) }, { timestamp: stamp }], {});
    await writer.commit();
    const read: Array<[string, string]> = [];
    for await (const item of readXlsx(out)) {
      if (item.kind === 'row')
        read.push([(item.values.day as Date).toISOString(), (item.values.at as Date).toISOString()]);
    }
    expect(read).toEqual(stamps.map((stamp) => [`${stamp.slice(0, 10)}T00:00:00.000Z`, new Date(stamp).toISOString()]));
  });
});
