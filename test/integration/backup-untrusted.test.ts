// A backup comes from elsewhere and is untrusted (issue 24): a crafted backup is refused before the
// restore sends a request, naming the file and line; a file name longer than the file system takes
// backs up and restores; a backup's files are private whatever the umask.
import { createHash } from 'node:crypto';
import {
  cpSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  readdirSync,
  openSync,
  writeSync,
  ftruncateSync,
  closeSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Manifest, runBackup, runRestore } from '../../src/backup/index.ts';
import { CrmClient } from '../../src/client/index.ts';
import { seedBackupAccount } from '../helpers/backup-account.ts';
import { runCli } from '../helpers/fake-io.ts';
import { allPages, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

let a: TestSandbox;
let b: TestSandbox;
const dir = mkdtempSync(join(tmpdir(), 'ferry-untrusted-'));
const backup = join(dir, 'backup');
const secret = join(dir, 'secret-local.txt');
const LONG_NAME = `${'é'.repeat(200)}.txt`;

const client = (box: TestSandbox) => new CrmClient({ baseUrl: box.url, auth: box.token });
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
const writeLines = (file: string, values: unknown[]) =>
  writeFileSync(file, values.map((v) => `${JSON.stringify(v)}\n`).join(''));

beforeAll(async () => {
  [a, b] = await Promise.all([startTestSandbox(), startTestSandbox()]);
  await seedBackupAccount(a, 2, { attachmentEvery: 1 });
  // A note whose file name takes 402 bytes: the service takes it, no file system does.
  const person = (await allPages(a, '/parties', 'parties')).find((p) => p.type === 'person');
  const upload = await a.call('POST', '/api/v2/attachments/upload', {
    rawBody: Buffer.from('long name\n'),
    headers: { 'content-type': 'text/plain', 'x-attachment-filename': encodeURIComponent(LONG_NAME) },
  });
  const made = await a.v2('POST', '/entries', {
    entry: {
      type: 'note',
      content: 'The long one',
      party: { id: person.id },
      attachments: [{ token: upload.body.upload.token }],
    },
  });
  expect(made.status).toBe(201);
  writeFileSync(secret, "the consultant's own file\n");
  const previous = process.umask(0o022);
  try {
    const ca = client(a);
    await runBackup({ out: backup, since: null }, { client: ca, account: { baseUrl: a.url, account: a.url } });
    await ca.close();
  } finally {
    process.umask(previous);
  }
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

/** A copy of the backup, changed by `tamper`, with the manifest made to match the files again (as an attacker would). */
function crafted(name: string, tamper: (folder: string) => void): string {
  const folder = join(dir, name);
  cpSync(backup, folder, { recursive: true });
  tamper(folder);
  return folder;
}

function recomputeManifest(
  folder: string,
  names: string[],
  given: Partial<Record<string, { bytes: number; sha256: string; records: number }>> = {},
): void {
  const file = join(folder, 'manifest.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as Manifest;
  for (const name of names) {
    const bytes = readFileSync(join(folder, name));
    manifest.files[name] = given[name] ?? {
      bytes: bytes.length,
      sha256: sha256(bytes),
      records: bytes.toString('utf8').split('\n').filter(Boolean).length,
    };
  }
  writeFileSync(file, JSON.stringify(manifest));
}

function setAttachmentLine(folder: string, change: (line: any) => void): void {
  const file = join(folder, 'attachments.jsonl');
  const all = lines(file);
  change(all[0]);
  writeLines(file, all);
  recomputeManifest(folder, ['attachments.jsonl']);
}

/** Restores `folder` into B, expecting a refusal before any request; gives the error. */
async function refused(folder: string): Promise<any> {
  const before = (await allPages(b, '/parties', 'parties')).length;
  const cb = client(b);
  let caught: unknown;
  try {
    await runRestore({ from: folder }, { client: cb, account: { baseUrl: b.url, account: b.url } });
  } catch (error) {
    caught = error;
  }
  expect(cb.transport.requestsSent).toBe(0);
  await cb.close();
  expect((await allPages(b, '/parties', 'parties')).length).toBe(before);
  expect(caught).toBeDefined();
  return caught;
}

describe('a crafted backup is refused before the first request, naming the file and line', () => {
  it('an attachment whose file climbs out of the backup (its sha256 and the manifest made to match)', async () => {
    const folder = crafted('climbing', (f) =>
      setAttachmentLine(f, (line) =>
        Object.assign(line, {
          file: '../secret-local.txt',
          bytes: readFileSync(secret).length,
          sha256: sha256(readFileSync(secret)),
        }),
      ),
    );
    const error = await refused(folder);
    expect(error).toMatchObject({
      code: 'PATH_UNSAFE',
      location: { file: join(folder, 'attachments.jsonl'), line: 1 },
    });
    expect(error.message).toMatch(/attachments\.jsonl, line 1: "\.\.\/secret-local\.txt" climbs out of/);
    const notes = await allPages(b, '/entries', 'entries');
    expect(notes).toEqual([]);
  });

  it('as a command: exit 2, the file and line named, nothing sent', async () => {
    const folder = crafted('climbing-cli', (f) =>
      setAttachmentLine(f, (line) =>
        Object.assign(line, {
          file: '../secret-local.txt',
          bytes: readFileSync(secret).length,
          sha256: sha256(readFileSync(secret)),
        }),
      ),
    );
    const result = await runCli(['restore', folder, '--base-url', b.url, '--token', b.token], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/PATH_UNSAFE.*attachments\.jsonl, line 1/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(await allPages(b, '/entries', 'entries')).toEqual([]);
  });

  it('an attachment given by an absolute path', async () => {
    const folder = crafted('absolute', (f) =>
      setAttachmentLine(f, (line) =>
        Object.assign(line, { file: secret, bytes: readFileSync(secret).length, sha256: sha256(readFileSync(secret)) }),
      ),
    );
    const error = await refused(folder);
    expect(error).toMatchObject({ code: 'PATH_UNSAFE', location: { line: 1 } });
    expect(error.message).toContain('is not a name inside');
  });

  it('an attachment file replaced by other bytes', async () => {
    const folder = crafted('replaced', (f) => {
      const [first] = lines(join(f, 'attachments.jsonl'));
      writeFileSync(join(f, first.file), 'not what was backed up\n');
    });
    const error = await refused(folder);
    expect(error).toMatchObject({
      code: 'SOURCE_UNREADABLE',
      location: { file: join(folder, 'attachments.jsonl'), line: 1 },
    });
    expect(error.message).toMatch(/is not the one backed up/);
  });

  it('an attachment line pointing at an entry the backup does not hold', async () => {
    const folder = crafted('dangling', (f) => setAttachmentLine(f, (line) => (line.entryId = 987_654)));
    const error = await refused(folder);
    expect(error).toMatchObject({
      code: 'SOURCE_UNREADABLE',
      location: { file: join(folder, 'attachments.jsonl'), line: 1 },
    });
    expect(error.message).toMatch(/belongs to entry 987654, which entries\.jsonl does not hold/);
  });

  it('an entry whose attachment attachments.jsonl lacks', async () => {
    const folder = crafted('lacking', (f) => {
      const file = join(f, 'attachments.jsonl');
      writeLines(file, lines(file).slice(1));
      recomputeManifest(f, ['attachments.jsonl']);
    });
    const error = await refused(folder);
    expect(error).toMatchObject({ code: 'SOURCE_UNREADABLE' });
    expect(error.message).toMatch(
      /entries\.jsonl: entry \d+ has attachment \d+, which attachments\.jsonl does not hold/,
    );
  });

  it('a file listed in the manifest that is a link to a file elsewhere', async () => {
    const folder = crafted('linked', (f) => {
      rmSync(join(f, 'users.jsonl'));
      symlinkSync(secret, join(f, 'users.jsonl'));
    });
    const error = await refused(folder);
    expect(error).toMatchObject({ code: 'PATH_UNSAFE' });
    expect(error.message).toMatch(/users\.jsonl.*link/);
  });

  it("a 2 GB line (its checksum in the manifest): a clear error, not Node's RangeError", async () => {
    const folder = crafted('huge', (f) => {
      // A sparse file: 2 GiB that take no disk. Its SHA-256 was computed once, outside the test.
      const prefix = '{"id":1,"type":"organisation","name":"';
      const fd = openSync(join(f, 'parties.jsonl'), 'w');
      writeSync(fd, prefix);
      ftruncateSync(fd, 2 * 1024 ** 3);
      closeSync(fd);
      const manifest = JSON.parse(readFileSync(join(f, 'manifest.json'), 'utf8')) as Manifest;
      manifest.files['parties.jsonl'] = {
        bytes: 2 * 1024 ** 3,
        records: 1,
        sha256: '846b0d0e9711f4cd0b794d688f20e5e99601adcb8352f4f6392a2f2878ae3558',
      };
      writeFileSync(join(f, 'manifest.json'), JSON.stringify(manifest));
    });
    const error = await refused(folder);
    expect(error).toMatchObject({
      code: 'SOURCE_UNREADABLE',
      location: { file: join(folder, 'parties.jsonl'), line: 1 },
    });
    expect(error.message).toMatch(/line 1: a line longer than [\d,]+ bytes/);
  }, 60_000);

  it('a manifest that names a path instead of a file of the folder', async () => {
    const folder = crafted('manifest-path', (f) => {
      const manifest = JSON.parse(readFileSync(join(f, 'manifest.json'), 'utf8')) as Manifest;
      manifest.files['../secret-local.txt'] = { bytes: 1, records: 1, sha256: '0'.repeat(64) };
      writeFileSync(join(f, 'manifest.json'), JSON.stringify(manifest));
    });
    const error = await refused(folder);
    expect(error).toMatchObject({ code: 'SOURCE_UNREADABLE' });
    expect(error.message).toMatch(
      /manifest\.json is not one of a crm-ferry backup .*files: "\.\.\/secret-local\.txt" is not a file name of the folder/,
    );
  });
});

describe('a file name longer than the file system takes', () => {
  it('backs up, and restores with its note', async () => {
    const attachments = lines(join(backup, 'attachments.jsonl'));
    expect(attachments.map((line) => line.filename)).toContain(LONG_NAME);
    const c = await startTestSandbox();
    try {
      const cc = client(c);
      const summary = await runRestore(
        { from: backup, workDir: join(dir, 'restore-long') },
        { client: cc, account: { baseUrl: c.url, account: c.url } },
      );
      await cc.close();
      expect(summary.import.stopped).toBeNull();
      expect(summary.import.steps.reduce((sum, step) => sum + step.rejected, 0)).toBe(0);
      const note = (await allPages(c, '/entries', 'entries')).find((e) => e.content.endsWith('The long one'));
      // The file on disk has a name the file system takes; the service keeps the attachment's own.
      expect(note.attachments.map((x: any) => x.filename)).toEqual([LONG_NAME]);
      const onDisk = readdirSync(
        join(dir, 'restore-long', 'files', String(attachments.find((x) => x.filename === LONG_NAME).id)),
      );
      expect(onDisk).toHaveLength(1);
      expect(Buffer.byteLength(onDisk[0]!)).toBeLessThanOrEqual(255);
      const downloaded = await c.call('GET', `/api/v2/attachments/${note.attachments[0].id}`);
      expect(downloaded.text).toBe('long name\n');
    } finally {
      await c.close();
    }
  }, 60_000);
});

describe("a backup's files", () => {
  it('are 0600 in 0700 folders under umask 022', () => {
    const modes: string[] = [];
    const walk = (folder: string): void => {
      modes.push(`${folder.slice(backup.length) || '/'} ${(statSync(folder).mode & 0o777).toString(8)}`);
      for (const entry of readdirSync(folder, { withFileTypes: true })) {
        const path = join(folder, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (!entry.name.startsWith('.backup.lock'))
          modes.push(`${path.slice(backup.length)} ${(statSync(path).mode & 0o777).toString(8)}`);
      }
    };
    walk(backup);
    expect(modes.filter((line) => !/ (600|700)$/.test(line))).toEqual([]);
    expect(modes.length).toBeGreaterThan(20);
  });
});
