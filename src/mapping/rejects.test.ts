import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { csvField } from '../files/index.ts';
import { cellText, isRejectsFile, RejectsWriter, removeStaleRejects } from './rejects.ts';
import type { RejectedRow } from './types.ts';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-rejects-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function rejected(row: number, values: RejectedRow['values'], extra: Partial<RejectedRow> = {}): RejectedRow {
  return {
    kind: 'rejected',
    row,
    location: { file: 'in.csv', row },
    key: null,
    field: 'email',
    code: 'MAPPING_VALUE',
    message: 'not an email address',
    values,
    ...extra,
  };
}

describe('csvField and cellText', () => {
  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\rhere', '"cr\rhere"'],
    ['', ''],
    [' padded ', ' padded '],
  ])('%j -> %j', (input, output) => {
    expect(csvField(input)).toBe(output);
  });

  it.each([
    [null, ''],
    [undefined, ''],
    [12.5, '12.5'],
    [true, 'true'],
    [new Date(Date.UTC(2024, 1, 29)), '2024-02-29'],
    [new Date(Date.UTC(2024, 1, 29, 13, 5)), '2024-02-29T13:05:00.000Z'],
  ])('cellText(%j) is %j', (input, output) => {
    expect(cellText(input)).toBe(output);
  });
});

describe('RejectsWriter', () => {
  it('writes BOM, header, quoted values and CRLF, byte for byte', async () => {
    const file = join(dir, 'rejects.csv');
    const writer = await RejectsWriter.open(file, ['Name', 'Notes, long', 'Email']);
    await writer.write(rejected(2, { Name: 'Zoë', 'Notes, long': 'He said "hi"\nthen left', Email: 'zoe@' }));
    await writer.write(
      rejected(5, null, { field: '', code: 'SOURCE_MALFORMED_RECORD', message: 'unclosed quote', raw: 'a,"b\r\nc' }),
    );
    expect(writer.count).toBe(2);
    await writer.commit();
    const bytes = await readFile(file);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.subarray(3).toString('utf8')).toBe(
      'Name,"Notes, long",Email,_row,_field,_code,_message,_rule,_raw\r\n' +
        'Zoë,"He said ""hi""\nthen left",zoe@,2,email,MAPPING_VALUE,Not an email address,,\r\n' +
        ',,,5,,SOURCE_MALFORMED_RECORD,Unclosed quote,,"a,""b\r\nc"\r\n',
    );
    expect(await isRejectsFile(file)).toBe(true);
  });

  it('leaves nothing under the real name until commit, and no temporary file after it', async () => {
    const file = join(dir, 'rejects.csv');
    const writer = await RejectsWriter.open(file, ['a']);
    await writer.write(rejected(2, { a: 'x' }));
    expect(await readdir(dir)).not.toContain('rejects.csv');
    expect((await readdir(dir)).some((name) => name.endsWith('.tmp'))).toBe(true);
    await writer.commit();
    expect(await readdir(dir)).toEqual(['rejects.csv']);
  });

  it('abort keeps the earlier file as it was and removes the temporary one', async () => {
    const file = join(dir, 'rejects.csv');
    const first = await RejectsWriter.open(file, ['a']);
    await first.write(rejected(2, { a: 'old' }));
    await first.commit();
    const before = await readFile(file, 'utf8');
    const second = await RejectsWriter.open(file, ['a']);
    await second.write(rejected(3, { a: 'new' }));
    await second.abort();
    expect(await readFile(file, 'utf8')).toBe(before);
    expect(await readdir(dir)).toEqual(['rejects.csv']);
  });

  it('writes many rows across buffer flushes in order', async () => {
    const file = join(dir, 'big.csv');
    const writer = await RejectsWriter.open(file, ['n']);
    for (let i = 0; i < 3000; i += 1) await writer.write(rejected(i + 2, { n: `${i}`.padStart(40, '.') }));
    await writer.commit();
    const lines = (await readFile(file, 'utf8')).split('\r\n');
    expect(lines).toHaveLength(3002);
    expect(lines[3000]).toMatch(/^\.+2999,3001,/);
  });

  it.each([
    ['of this version', ['_row', '_field', '_code', '_message', '_rule', '_raw']],
    ['written before the _rule column', ['_row', '_field', '_code', '_message', '_raw']],
  ])('drops the reject columns of an input that is itself a rejects file %s', async (_name, own) => {
    const earlier = join(dir, 'earlier.csv');
    await writeFile(earlier, `\uFEFFa,${own.join(',')}\r\nx,7,email,MAPPING_VALUE,old reason,\r\n`);
    expect(await isRejectsFile(earlier)).toBe(true);
    const file = join(dir, 'again.csv');
    const writer = await RejectsWriter.open(file, ['a', ...own]);
    await writer.write(rejected(2, { a: 'x', _row: '7', _message: 'old reason' }));
    await writer.commit();
    expect(await readFile(file, 'utf8')).toBe(
      '\uFEFFa,_row,_field,_code,_message,_rule,_raw\r\nx,2,email,MAPPING_VALUE,Not an email address,,\r\n',
    );
  });

  it("says the reason in the data owner's words, and the rule's place in the mapping in _rule", async () => {
    const file = join(dir, 'worded.csv');
    const writer = await RejectsWriter.open(file, ['E-mail']);
    await writer.write(
      rejected(
        7,
        { 'E-mail': 'anne@@example' },
        {
          message:
            'fields[2].value.transform[0] (`email`): expected an email address like name@example.com, got "anne@@example"',
          column: 'E-mail',
          expected: 'an e-mail address',
          rule: 'fields[2].value.transform[0]',
        },
      ),
    );
    await writer.commit();
    expect(await readFile(file, 'utf8')).toBe(
      '\uFEFFE-mail,_row,_field,_code,_message,_rule,_raw\r\nanne@@example,7,email,MAPPING_VALUE,"E-mail ""anne@@example"" is not an e-mail address",fields[2].value.transform[0],\r\n',
    );
  });

  it('refuses to overwrite a file it did not write', async () => {
    const file = join(dir, 'rejects.csv');
    await writeFile(file, 'my,own,data\r\n');
    await expect(RejectsWriter.open(file, ['a'])).rejects.toMatchObject({ code: 'EXPORT_WRITE' });
    expect(await readFile(file, 'utf8')).toBe('my,own,data\r\n');
  });

  it('overwrites a rejects file of an earlier run', async () => {
    const file = join(dir, 'rejects.csv');
    const first = await RejectsWriter.open(file, ['a']);
    await first.write(rejected(2, { a: 'old' }));
    await first.commit();
    const second = await RejectsWriter.open(file, ['b']);
    await second.write(rejected(9, { b: 'new' }));
    await second.commit();
    expect(await readFile(file, 'utf8')).toBe(
      '\uFEFFb,_row,_field,_code,_message,_rule,_raw\r\nnew,9,email,MAPPING_VALUE,Not an email address,,\r\n',
    );
  });
});

describe('removeStaleRejects', () => {
  it('removes a file this tool wrote, keeps any other, and says which', async () => {
    const ours = join(dir, 'ours.csv');
    const writer = await RejectsWriter.open(ours, ['a']);
    await writer.commit();
    const theirs = join(dir, 'theirs.csv');
    await writeFile(theirs, '\uFEFFa,b\r\n');
    expect(await removeStaleRejects(ours)).toBe('removed');
    expect(await removeStaleRejects(theirs)).toBe('kept-not-ours');
    expect(await removeStaleRejects(join(dir, 'none.csv'))).toBe('none');
    expect(await readdir(dir)).toEqual(['theirs.csv']);
  });
});
