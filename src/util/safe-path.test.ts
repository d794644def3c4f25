import { constants } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FerryError } from '../errors/index.ts';
import { fileNameFor, temporaryNameFor, writeFileAtomic } from '../files/index.ts';
import { makePrivateFolder, openInside, openNoFollow, pathInside } from './safe-path.ts';

let top: string;
let folder: string;
const context = { what: 'attachments.jsonl, line 3' };

beforeEach(async () => {
  top = await mkdtemp(join(tmpdir(), 'safe-path-'));
  folder = join(top, 'backup');
  await mkdir(join(folder, 'files', '12'), { recursive: true });
  await writeFile(join(folder, 'files', '12', 'a.txt'), 'inside');
  await writeFile(join(top, 'secret.txt'), 'outside');
  await mkdir(join(top, 'elsewhere'));
  await writeFile(join(top, 'elsewhere', 'b.txt'), 'outside too');
  await symlink(join(top, 'secret.txt'), join(folder, 'files', 'linked.txt'));
  await symlink(join(top, 'elsewhere'), join(folder, 'files', '13'));
});

afterEach(async () => {
  await rm(top, { recursive: true, force: true });
});

async function refusal(promise: Promise<unknown>): Promise<FerryError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(FerryError);
  expect((error as FerryError).code).toBe('PATH_UNSAFE');
  expect((error as FerryError).message).toContain('attachments.jsonl, line 3');
  return error as FerryError;
}

describe('pathInside', () => {
  it.each([
    ['a plain name', 'files/12/a.txt'],
    ['a name with ./ levels', './files/./12/a.txt'],
    ['a name not there yet', 'files/14/new.txt'],
  ])('takes %s', async (_, name) => {
    const path = await pathInside(folder, name, context);
    expect(path.startsWith(join(folder, 'files'))).toBe(true);
  });

  it.each([
    ['climbing out', '../secret.txt'],
    ['climbing out from inside', 'files/../../secret.txt'],
    ['an absolute path', '/etc/passwd'],
    ['a backslash', 'files\\..\\..\\secret.txt'],
    ['a zero byte', 'files/a\0.txt'],
    ['an empty name', ''],
    ['the folder itself', '.'],
    ['a link as the file', 'files/linked.txt'],
    ['a link as a level on the way', 'files/13/b.txt'],
  ])('refuses %s', async (_, name) => {
    await refusal(pathInside(folder, name, context));
  });

  it('takes a folder that is itself a link (the person chose it)', async () => {
    await symlink(folder, join(top, 'backup-link'));
    const path = await pathInside(join(top, 'backup-link'), 'files/12/a.txt', context);
    expect(await readFile(path, 'utf8')).toBe('inside');
  });
});

describe('openInside', () => {
  it('reads a file inside', async () => {
    const { handle } = await openInside(folder, 'files/12/a.txt', context);
    expect(await handle.readFile('utf8')).toBe('inside');
    await handle.close();
  });

  it('refuses a link and a folder', async () => {
    await refusal(openInside(folder, 'files/linked.txt', context));
    await refusal(openInside(folder, 'files/12', context));
  });

  it('throws ENOENT for a missing file, for the caller to word', async () => {
    await expect(openInside(folder, 'files/12/none.txt', context)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('openNoFollow', () => {
  it('refuses to append through a planted link, leaving its target as it was', async () => {
    const journal = join(folder, 'people.jsonl');
    await symlink(join(top, 'secret.txt'), journal);
    await refusal(openNoFollow(journal, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, context));
    expect(await readFile(join(top, 'secret.txt'), 'utf8')).toBe('outside');
  });

  it('creates a file 0600', async () => {
    const handle = await openNoFollow(join(folder, 'new.jsonl'), constants.O_WRONLY | constants.O_CREAT, context);
    await handle.close();
    expect((await stat(join(folder, 'new.jsonl'))).mode & 0o777).toBe(0o600);
  });
});

describe('writeFileAtomic', () => {
  it('replaces a planted link instead of writing through it', async () => {
    const target = join(folder, 'state.json');
    await symlink(join(top, 'secret.txt'), target);
    await writeFileAtomic(target, '{}\n');
    expect(await readFile(join(top, 'secret.txt'), 'utf8')).toBe('outside');
    expect((await lstat(target)).isSymbolicLink()).toBe(false);
    expect(await readFile(target, 'utf8')).toBe('{}\n');
    expect((await stat(target)).mode & 0o777).toBe(0o600);
  });

  it('leaves no temporary file behind when the write fails', async () => {
    await expect(writeFileAtomic(join(folder, 'missing-folder', 'x.json'), '{}')).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});

describe('makePrivateFolder', () => {
  it('creates 0700 whatever the umask, and refuses a link', async () => {
    const previous = process.umask(0o000);
    try {
      const made = await makePrivateFolder(join(folder, 'results', 'deep'), { what: 'the results folder' });
      expect((await stat(made)).mode & 0o777).toBe(0o700);
    } finally {
      process.umask(previous);
    }
    await symlink(join(top, 'elsewhere'), join(folder, 'linked-results'));
    await expect(
      makePrivateFolder(join(folder, 'linked-results'), { what: 'the results folder' }),
    ).rejects.toMatchObject({ code: 'PATH_UNSAFE' });
    expect(await readlink(join(folder, 'linked-results'))).toBe(join(top, 'elsewhere'));
  });
});

describe('fileNameFor', () => {
  it('keeps a name that fits', () => {
    expect(fileNameFor('Angebot 2024.pdf')).toBe('Angebot 2024.pdf');
  });

  it('shortens a long name on a character, with a hash and the extension, the same way each time', () => {
    const long = `${'é'.repeat(200)}.txt`;
    const short = fileNameFor(long);
    expect(Buffer.byteLength(short)).toBeLessThanOrEqual(255);
    expect(short.endsWith('.txt')).toBe(true);
    expect(short).toMatch(/^é+~[0-9a-f]{12}\.txt$/);
    expect(fileNameFor(long)).toBe(short);
    expect(fileNameFor(`${'é'.repeat(199)}a.txt`)).not.toBe(short);
  });

  it.each([
    ['a path climbing out', '../../secret.txt', '.._.._secret.txt'],
    ['an absolute path', '/etc/passwd', '_etc_passwd'],
    ['a Windows path', 'C:\\Users\\a.txt', 'C:_Users_a.txt'],
    ['a zero byte and a line break', 'a\u0000b\nc.txt', 'a_b_c.txt'],
    ['nothing but dots', '..', 'attachment'],
    ['nothing at all', '  ', 'attachment'],
  ])('makes one file name of %s', (_what, name, expected) => {
    expect(fileNameFor(name)).toBe(expected);
  });

  it('writes a file under the shortened name, temporary name included', async () => {
    const target = join(folder, fileNameFor(`${'é'.repeat(200)}.txt`));
    expect(Buffer.byteLength(temporaryNameFor(target).split('/').pop() ?? '')).toBeLessThanOrEqual(255);
    await writeFileAtomic(target, 'bytes');
    expect(await readFile(target, 'utf8')).toBe('bytes');
  });
});
