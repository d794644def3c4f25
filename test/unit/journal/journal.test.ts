import { spawn } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { FerryError } from '../../../src/errors/index.ts';
import {
  journalLine,
  JournalWriter,
  loadJournal,
  readJournal,
  StateDir,
  type JournalEntry,
  type JournalSeal,
} from '../../../src/journal/index.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-journal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const fresh = (): string => join(dir, `j${++files}.jsonl`);
const at = '2026-01-01T00:00:00.000Z';

async function write(file: string, entries: JournalEntry[]): Promise<void> {
  const writer = await JournalWriter.open(file);
  await Promise.all(entries.map((e) => writer.append(e)));
  await writer.close();
}

/** A writer on a fresh journal whose every write fails as on a full disk (ENOSPC). */
function openOnFullDisk(): Promise<JournalWriter> {
  return JournalWriter.open(fresh(), {
    openFile: async (file, flags, mode) => {
      const handle = await open(file, flags, mode);
      handle.write = (async () => {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }) as typeof handle.write;
      return handle;
    },
  });
}

async function caught(promise: Promise<unknown>): Promise<FerryError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FerryError);
  return error as FerryError;
}

describe('loadJournal folds the lines of each row', () => {
  it.each([
    [
      'intent then done: the record and the body',
      [
        { t: 'intent', k: 'a', op: 'create', run: 'r1', at, fp: 'f1', body: { name: 'A' } },
        { t: 'done', k: 'a', op: 'create', run: 'r1', at, id: 7, fp: 'f1' },
      ],
      { id: 7, fp: 'f1', body: { name: 'A' }, origin: 'created', pending: null },
    ],
    [
      'intent alone: pending',
      [{ t: 'intent', k: 'a', op: 'create', run: 'r1', at, fp: 'f1', body: { name: 'A' } }],
      { id: null, pending: { t: 'intent', k: 'a', op: 'create', run: 'r1', at, fp: 'f1', body: { name: 'A' } } },
    ],
    [
      'intent then cancel: free again',
      [
        { t: 'intent', k: 'a', op: 'create', run: 'r1', at, fp: 'f1' },
        { t: 'cancel', k: 'a', run: 'r1', at },
      ],
      { id: null, pending: null },
    ],
    [
      'reject then done: the reject is cleared',
      [
        { t: 'reject', k: 'a', run: 'r1', at, code: 'API_VALIDATION', message: 'no', status: 422 },
        { t: 'intent', k: 'a', op: 'create', run: 'r2', at, fp: 'f2' },
        { t: 'done', k: 'a', op: 'create', run: 'r2', at, id: 3, fp: 'f2' },
      ],
      { id: 3, rejected: null, run: 'r2' },
    ],
    [
      'reject stays until then',
      [{ t: 'reject', k: 'a', run: 'r1', at, code: 'API_VALIDATION', message: 'no', status: 422 }],
      { id: null, rejected: { code: 'API_VALIDATION', message: 'no', status: 422, run: 'r1' } },
    ],
    [
      'match: the done carries the body',
      [{ t: 'done', k: 'a', op: 'match', run: 'r1', at, id: 9, fp: 'f', body: {}, origin: 'matched' }],
      { id: 9, body: {}, origin: 'matched' },
    ],
    [
      'update keeps the id, takes the new body',
      [
        { t: 'intent', k: 'a', op: 'create', run: 'r1', at, fp: 'f1', body: { n: 1 } },
        { t: 'done', k: 'a', op: 'create', run: 'r1', at, id: 4, fp: 'f1' },
        { t: 'intent', k: 'a', op: 'update', run: 'r2', at, fp: 'f2', body: { n: 2 }, id: 4 },
        { t: 'done', k: 'a', op: 'update', run: 'r2', at, id: 4, fp: 'f2' },
      ],
      { id: 4, fp: 'f2', body: { n: 2 }, origin: 'created' },
    ],
    [
      'delete forgets the record',
      [
        { t: 'done', k: 'a', op: 'create', run: 'r1', at, id: 4, fp: 'f1' },
        { t: 'intent', k: 'a', op: 'delete', run: 'r2', at, fp: 'f1', id: 4 },
        { t: 'done', k: 'a', op: 'delete', run: 'r2', at, id: 4, fp: 'f1' },
      ],
      { id: null, fp: null, body: null, pending: null },
    ],
  ] as Array<[string, JournalEntry[], object]>)('%s', async (_name, entries, expected) => {
    const file = fresh();
    await write(file, entries);
    const loaded = await loadJournal(file);
    expect(loaded.rows.get('a')).toMatchObject(expected);
    expect(loaded.tornTail).toBe(false);
  });

  it('a missing file is an empty journal; runs are listed in order', async () => {
    expect((await loadJournal(join(dir, 'none.jsonl'))).rows.size).toBe(0);
    const file = fresh();
    await write(file, [
      { t: 'run', run: 'r1', at, event: 'start' },
      { t: 'cancel', k: 'x', run: 'r2', at },
    ]);
    expect((await loadJournal(file)).runs).toEqual(['r1', 'r2']);
  });
});

describe('torn and damaged lines', () => {
  const entries: JournalEntry[] = [
    { t: 'done', k: 'a', op: 'create', run: 'r', at, id: 1, fp: 'x' },
    { t: 'done', k: 'b', op: 'create', run: 'r', at, id: 2, fp: 'y' },
  ];

  it('drops a last line cut short, and the writer cuts it off before appending', async () => {
    const file = fresh();
    await write(file, entries);
    const whole = statSync(file).size;
    appendFileSync(file, journalLine({ t: 'done', k: 'c', op: 'create', run: 'r', at, id: 3, fp: 'z' }).slice(0, 20));
    const loaded = await loadJournal(file);
    expect(loaded.tornTail).toBe(true);
    expect([...loaded.rows.keys()]).toEqual(['a', 'b']);
    expect(loaded.validLength).toBe(whole);
    await write(file, [{ t: 'done', k: 'd', op: 'create', run: 'r', at, id: 4, fp: 'w' }]);
    const again = await loadJournal(file);
    expect(again.tornTail).toBe(false);
    expect([...again.rows.keys()]).toEqual(['a', 'b', 'd']);
  });

  it('drops a garbled last line (its checksum does not match)', async () => {
    const file = fresh();
    await write(file, entries);
    appendFileSync(
      file,
      journalLine({ t: 'done', k: 'c', op: 'create', run: 'r', at, id: 3, fp: 'z' }).replace('"id":3', '"id":8'),
    );
    const loaded = await loadJournal(file);
    expect(loaded.tornTail).toBe(true);
    expect(loaded.rows.has('c')).toBe(false);
  });

  it('a damaged line with lines after it is JOURNAL_CORRUPT, with its line number', async () => {
    const file = fresh();
    await write(file, entries);
    const text = readFileSync(file, 'utf8').replace('"id":1', '"id":5');
    writeFileSync(file, text);
    const error = await caught(loadJournal(file));
    expect(error.code).toBe('JOURNAL_CORRUPT');
    expect(error.location).toMatchObject({ file, line: 1 });
  });

  it('readJournal gives the entries in order', async () => {
    const file = fresh();
    await write(file, entries);
    const read: JournalEntry[] = [];
    for await (const entry of readJournal(file)) read.push(entry);
    expect(read).toEqual(entries);
  });
});

describe('JournalWriter', () => {
  it('group commit: concurrent appends share fsyncs', async () => {
    const file = fresh();
    const writer = await JournalWriter.open(file);
    await Promise.all(Array.from({ length: 200 }, (_, i) => writer.append({ t: 'cancel', k: `k${i}`, run: 'r', at })));
    expect(writer.syncs).toBeGreaterThan(0);
    expect(writer.syncs).toBeLessThan(20);
    await writer.close();
    expect((await loadJournal(file)).rows.size).toBe(200);
  });

  it('a failed write rejects the waiting appends and every later one', async () => {
    const writer = await openOnFullDisk();
    const results = await Promise.allSettled([
      writer.append({ t: 'cancel', k: 'a', run: 'r', at }),
      writer.append({ t: 'cancel', k: 'b', run: 'r', at }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    const later = await caught(writer.append({ t: 'cancel', k: 'c', run: 'r', at }));
    expect(later.code).toBe('JOURNAL_WRITE');
    expect(later.message).toContain('ENOSPC');
    await writer.close();
  });

  it('every append that resolved is in the file after the process is killed with SIGKILL', async () => {
    const file = fresh();
    const script = join(dir, 'append-child.mts');
    writeFileSync(
      script,
      `import { JournalWriter } from ${JSON.stringify(join(ROOT, 'src/journal/index.ts'))};
const writer = await JournalWriter.open(process.argv[2]);
let i = 0;
for (;;) {
  const batch = Array.from({ length: 8 }, () => writer.append({ t: 'cancel', k: 'k' + i++, run: 'r', at: 'x' }));
  await Promise.all(batch);
  process.stdout.write(i + '\\n');
}
`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', script, file], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let confirmed = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      const last = chunk.toString().trim().split('\n').at(-1);
      if (last) confirmed = Number(last);
    });
    await new Promise<void>((done) => {
      const check = setInterval(() => {
        if (confirmed >= 400) {
          clearInterval(check);
          child.kill('SIGKILL');
          done();
        }
      }, 5);
    });
    await new Promise((done) => child.on('exit', done));
    const loaded = await loadJournal(file);
    expect(loaded.rows.size).toBeGreaterThanOrEqual(confirmed);
    for (let i = 0; i < confirmed; i += 1) expect(loaded.rows.has(`k${i}`)).toBe(true);
  }, 30_000);
});

describe('StateDir', () => {
  const account = { baseUrl: 'https://a.example', account: 'https://a.example' };
  /** An account whose users are not asked: the user check has nothing to compare. */
  const noUsers = async (): Promise<number[]> => [];

  it('creates its folders 0700 and files 0600, names journals and results', async () => {
    const stateDir = join(dir, 'modes');
    const state = await StateDir.open({ dir: stateDir, account, users: noUsers });
    expect(statSync(stateDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(stateDir, 'state.json')).mode & 0o777).toBe(0o600);
    expect(statSync(join(stateDir, 'lock')).mode & 0o777).toBe(0o600);
    expect(state.journalFile('people')).toBe(join(stateDir, 'journal', 'people.jsonl'));
    expect(state.journalFile('a/b')).toBe(join(stateDir, 'journal', 'a%2fb.jsonl'));
    expect(state.resultFile('people', 'rejects')).toBe(join(stateDir, 'results', 'people.rejects.csv'));
    const [one, two] = [state.newRunId(), state.newRunId()];
    expect(one < two).toBe(true);
    await state.close();
    expect(existsSync(join(stateDir, 'lock'))).toBe(false);
    expect(readFileSync(join(stateDir, 'state.json'), 'utf8')).not.toMatch(/token|secret/i);
  });

  it("refuses a second run while the first holds the lock, and takes over a dead process's lock", async () => {
    const stateDir = join(dir, 'lock');
    const first = await StateDir.open({ dir: stateDir, account, users: noUsers });
    const error = await caught(StateDir.open({ dir: stateDir, account, users: noUsers }));
    expect(error.code).toBe('JOURNAL_LOCKED');
    expect(error.message).toContain(`process ${process.pid}`);
    await first.close();
    // A lock left by a process that no longer exists.
    writeFileSync(join(stateDir, 'lock'), JSON.stringify({ pid: 2 ** 22 + 17, host: hostname(), since: at }));
    const second = await StateDir.open({ dir: stateDir, account, users: noUsers });
    await second.close();
  });

  it("takes over a lock naming this process's id that this process does not hold (a container restarted)", async () => {
    const stateDir = join(dir, 'lock-same-pid');
    await (await StateDir.open({ dir: stateDir, account, users: noUsers })).close();
    writeFileSync(join(stateDir, 'lock'), JSON.stringify({ pid: process.pid, host: hostname(), since: at }));
    const state = await StateDir.open({ dir: stateDir, account, users: noUsers });
    await state.close();
  });

  it.skipIf(process.platform !== 'linux')(
    'takes over the lock of a killed process that was never reaped (a zombie)',
    async () => {
      const stateDir = join(dir, 'lock-zombie');
      await (await StateDir.open({ dir: stateDir, account, users: noUsers })).close();
      // The shell starts a short sleep and becomes a long one, which never reaps the short one: once
      // that ends, it stays a zombie. (Still running when the shell execs, so the shell cannot reap it.)
      const parent = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 20'], { stdio: ['ignore', 'pipe', 'ignore'] });
      try {
        const pid = Number(
          await new Promise<string>((done) => parent.stdout.once('data', (chunk) => done(String(chunk).trim()))),
        );
        for (let i = 0; i < 100 && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z'); i += 1)
          await new Promise((r) => setTimeout(r, 20));
        expect(readFileSync(`/proc/${pid}/stat`, 'utf8')).toContain(') Z');
        writeFileSync(join(stateDir, 'lock'), JSON.stringify({ pid, host: hostname(), since: at }));
        const state = await StateDir.open({ dir: stateDir, account, users: noUsers });
        await state.close();
      } finally {
        parent.kill('SIGKILL');
      }
    },
  );

  it('refuses a state written against another account, naming both', async () => {
    const stateDir = join(dir, 'account');
    await (await StateDir.open({ dir: stateDir, account, users: noUsers })).close();
    const error = await caught(
      StateDir.open({
        dir: stateDir,
        account: { baseUrl: 'https://b.example', account: 'https://b.example' },
        users: noUsers,
      }),
    );
    expect(error.code).toBe('JOURNAL_ACCOUNT');
    expect(error.message).toContain('https://a.example');
    expect(error.message).toContain('https://b.example');
    expect(existsSync(join(stateDir, 'lock'))).toBe(false);
  });

  it('--fresh moves the earlier state aside instead of deleting it', async () => {
    const stateDir = join(dir, 'fresh');
    const first = await StateDir.open({ dir: stateDir, account, users: noUsers });
    writeFileSync(first.journalFile('people'), journalLine({ t: 'cancel', k: 'a', run: 'r', at }));
    await first.close();
    const other = { baseUrl: 'https://b.example', account: 'https://b.example' };
    const second = await StateDir.open({ dir: stateDir, account: other, fresh: true, users: noUsers });
    await second.close();
    const aside = readdirSync(stateDir).filter((name) => name.startsWith('previous-'));
    expect(aside).toHaveLength(1);
    expect(existsSync(join(stateDir, aside[0] as string, 'journal', 'people.jsonl'))).toBe(true);
    expect(existsSync(join(stateDir, 'journal', 'people.jsonl'))).toBe(false);
  });

  it('refuses special places and files', async () => {
    expect((await caught(StateDir.open({ dir: '/proc/self/x', account, users: noUsers }))).code).toBe('USAGE');
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    expect((await caught(StateDir.open({ dir: file, account, users: noUsers }))).code).toBe('USAGE');
    expect((await caught(loadJournal('/dev/zero'))).code).toBe('JOURNAL_CORRUPT');
  });
});

describe('a journal is checked against its seal (what its runs wrote)', () => {
  const lines: JournalEntry[] = Array.from({ length: 40 }, (_, i) => ({
    t: 'intent',
    k: `k${i}`,
    op: 'create',
    run: 'r1',
    at,
    fp: `f${i}`,
    body: { name: `N${i}` },
  }));

  async function sealed(): Promise<{ file: string; seal: JournalSeal }> {
    const file = fresh();
    const seals: JournalSeal[] = [];
    const writer = await JournalWriter.open(file, { onSeal: async (seal) => void seals.push(seal), sealEvery: 10 });
    for (const entry of lines) await writer.append(entry);
    await writer.close();
    const seal = seals.at(-1) as JournalSeal;
    expect(seal).toEqual((await loadJournal(file)).seal);
    return { file, seal };
  }

  it('the seal follows what is durable: every sealEvery lines and at close', async () => {
    const file = fresh();
    const seals: JournalSeal[] = [];
    const writer = await JournalWriter.open(file, { onSeal: async (seal) => void seals.push(seal), sealEvery: 10 });
    for (const entry of lines.slice(0, 25)) await writer.append(entry);
    expect(seals.map((s) => s.lines)).toEqual([10, 20]);
    await writer.close();
    expect(seals.map((s) => s.lines)).toEqual([10, 20, 25]);
    expect(seals.at(-1)?.bytes).toBe(statSync(file).size);
  });

  it('a journal that starts with its seal loads, with lines appended after it (a run killed before it said so)', async () => {
    const { file, seal } = await sealed();
    appendFileSync(file, journalLine({ t: 'cancel', k: 'k1', run: 'r2', at }));
    const loaded = await loadJournal(file, { seal });
    expect(loaded.rows.size).toBe(40);
    expect(loaded.seal.lines).toBe(41);
  });

  it('a torn last line past the seal is still dropped, as after kill -9', async () => {
    const { file, seal } = await sealed();
    appendFileSync(file, journalLine({ t: 'cancel', k: 'k1', run: 'r2', at }).slice(0, 20));
    const loaded = await loadJournal(file, { seal });
    expect(loaded.tornTail).toBe(true);
    expect(loaded.seal).toEqual(seal);
  });

  it.each([
    [
      'cut in half at a line',
      (file: string) =>
        writeFileSync(
          file,
          readFileSync(file, 'utf8')
            .split('\n')
            .slice(0, 20)
            .map((l) => `${l}\n`)
            .join(''),
        ),
      /holds 20 whole lines .* its runs wrote 40/,
    ],
    [
      'cut in the middle of a line',
      (file: string) => writeFileSync(file, readFileSync(file).subarray(0, 1000)),
      /its runs wrote 40/,
    ],
    [
      'a line changed, its checksum made again',
      (file: string) => {
        const text = readFileSync(file, 'utf8').split('\n');
        const json = (text[5] as string).split('\t')[0]?.replace('"k5"', '"k9"') as string;
        text[5] = journalLine(JSON.parse(json) as JournalEntry).trimEnd();
        writeFileSync(file, text.join('\n'));
      },
      /first 40 lines are not the lines its runs wrote/,
    ],
    ['removed', (file: string) => rmSync(file), /it is missing, and its runs wrote 40 lines/],
    [
      'replaced by another journal as long',
      (file: string) => writeFileSync(file, lines.map((e) => journalLine({ ...e, run: 'r9' })).join('')),
      /not the lines its runs wrote/,
    ],
  ])('a journal %s is JOURNAL_CORRUPT, saying the way on', async (_name, damage, message) => {
    const { file, seal } = await sealed();
    damage(file);
    const error = await caught(loadJournal(file, { seal }));
    expect(error.code).toBe('JOURNAL_CORRUPT');
    expect(error.message).toMatch(message);
    expect(error.hint).toContain('--reconcile');
    // readJournal (rollback) refuses it the same way, before it hands out what follows the cut.
    const read = await caught(
      (async () => {
        for await (const _entry of readJournal(file, { seal })) void _entry;
      })(),
    );
    expect(read.code).toBe('JOURNAL_CORRUPT');
    // Without a seal (--reconcile, or a state from before seals) it is taken as it is.
    if (existsSync(file)) expect((await loadJournal(file)).rows.size).toBeGreaterThan(0);
  });

  it("the state keeps each journal's seal; a cut journal is refused by the next open, and taken as it is with trustAsItIs", async () => {
    const account = { baseUrl: 'https://a.example', account: 'https://a.example' };
    const stateDir = join(dir, 'sealed-state');
    const first = await StateDir.open({ dir: stateDir, account, users: async () => [] });
    const writer = await first.openJournal('people', await first.loadJournal('people'));
    for (const entry of lines) await writer.append(entry);
    await writer.close();
    await first.close();
    expect(JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8')).journals['people.jsonl']).toMatchObject({
      lines: 40,
    });
    const file = join(stateDir, 'journal', 'people.jsonl');
    writeFileSync(
      file,
      readFileSync(file, 'utf8')
        .split('\n')
        .slice(0, 10)
        .map((l) => `${l}\n`)
        .join(''),
    );
    const second = await StateDir.open({ dir: stateDir, account, users: async () => [] });
    try {
      expect((await caught(second.loadJournal('people'))).code).toBe('JOURNAL_CORRUPT');
      const taken = await second.loadJournal('people', { trustAsItIs: true });
      expect(taken.rows.size).toBe(10);
      // Written on from what it holds, the journal is sealed anew.
      const on = await second.openJournal('people', taken);
      await on.append({ t: 'cancel', k: 'k0', run: 'r2', at });
      await on.close();
      expect((await second.loadJournal('people')).rows.size).toBe(10);
    } finally {
      await second.close();
    }
  });
});

describe('group commit', () => {
  /** A journal whose writes wait until `release` is called, and which counts them. */
  async function heldWriter(
    options: { maxBatch?: number; queuedUpToMs?: number } = {},
  ): Promise<{ writer: JournalWriter; writes: string[]; release: () => void; started: Promise<void> }> {
    const writes: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let began!: () => void;
    const started = new Promise<void>((resolve) => (began = resolve));
    const writer = await JournalWriter.open(fresh(), {
      ...options,
      openFile: async (file, flags, mode) => {
        const handle = await open(file, flags, mode);
        const write = handle.write.bind(handle) as (
          buffer: Buffer,
          offset: number,
          length: number,
          position: null,
        ) => Promise<{ bytesWritten: number; buffer: Buffer }>;
        handle.write = (async (buffer: Buffer, offset: number, length: number, position: null) => {
          writes.push(buffer.subarray(offset, offset + length).toString());
          began();
          if (writes.length === 1) await gate;
          return write(buffer, offset, length, position);
        }) as typeof handle.write;
        return handle;
      },
    });
    return { writer, writes, release, started };
  }

  it('one write covers every line appended while the one before it ran', async () => {
    const { writer, writes, release, started } = await heldWriter();
    const first = writer.append({ t: 'cancel', k: 'first', run: 'r', at });
    await started;
    const more = Array.from({ length: 50 }, (_, i) => writer.append({ t: 'cancel', k: `k${i}`, run: 'r', at }));
    release();
    await Promise.all([first, ...more]);
    expect(writes).toHaveLength(2);
    expect(writes[1]?.split('\n').filter(Boolean)).toHaveLength(50);
    expect(writer.syncs).toBe(2);
    await writer.close();
  });

  it('an append resolves only once its group is written', async () => {
    const { writer, release, started } = await heldWriter();
    let resolved = false;
    const first = writer.append({ t: 'cancel', k: 'first', run: 'r', at }).then(() => (resolved = true));
    await started;
    // The write is held: however long the event loop turns, the append has not resolved.
    for (let i = 0; i < 20; i += 1) await new Promise((r) => setImmediate(r));
    expect(resolved).toBe(false);
    release();
    await first;
    expect(resolved).toBe(true);
    await writer.close();
  });

  it('a queued line starts no write of its own: it goes out with the next line waited for', async () => {
    const file = fresh();
    const writer = await JournalWriter.open(file);
    const queued = Array.from({ length: 10 }, (_, i) => writer.enqueue({ t: 'cancel', k: `q${i}`, run: 'r', at }));
    for (let i = 0; i < 5; i += 1) await new Promise((r) => setImmediate(r));
    expect(writer.syncs).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe('');
    await writer.append({ t: 'cancel', k: 'waited', run: 'r', at });
    expect(writer.syncs).toBe(1);
    // Those queued before it are on disk with it: waiting for them writes nothing more.
    await writer.durable(queued.at(-1) as number);
    expect(writer.syncs).toBe(1);
    expect(readFileSync(file, 'utf8').split('\n').filter(Boolean)).toHaveLength(11);
    await writer.close();
  });

  it('durable(line) writes the queued lines in one group and resolves once they are on disk', async () => {
    const { writer, writes, release, started } = await heldWriter();
    const lines = Array.from({ length: 30 }, (_, i) => writer.enqueue({ t: 'cancel', k: `k${i}`, run: 'r', at }));
    let resolved = false;
    const third = writer.durable(lines[2] as number).then(() => (resolved = true));
    await started;
    for (let i = 0; i < 20; i += 1) await new Promise((r) => setImmediate(r));
    expect(resolved).toBe(false);
    release();
    await third;
    await writer.durable(lines.at(-1) as number);
    expect(writes).toHaveLength(1);
    expect(writes[0]?.split('\n').filter(Boolean)).toHaveLength(30);
    await writer.close();
  });

  it('a full batch of queued lines is written without anyone waiting, and close writes the rest', async () => {
    const { writer, writes, release, started } = await heldWriter({ maxBatch: 8 });
    for (let i = 0; i < 11; i += 1) writer.enqueue({ t: 'cancel', k: `k${i}`, run: 'r', at });
    // Nobody waits for a line, yet a write began: the eighth line filled a batch.
    await started;
    release();
    await writer.close();
    expect(writes.map((text) => text.split('\n').filter(Boolean).length)).toEqual([8, 3]);
    expect((await loadJournal(writer.file)).rows.size).toBe(11);
  });

  it('a queued line nobody waits for is written once queuedUpToMs has passed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const { writer, writes, release, started } = await heldWriter({ queuedUpToMs: 1000 });
      const line = writer.enqueue({ t: 'cancel', k: 'late', run: 'r', at });
      let began = false;
      void started.then(() => (began = true));
      vi.advanceTimersByTime(999);
      for (let i = 0; i < 5; i += 1) await new Promise((r) => setImmediate(r));
      expect(began).toBe(false);
      vi.advanceTimersByTime(1);
      // Nobody waits for the line, yet its group begins.
      await started;
      release();
      await writer.durable(line);
      expect(writes).toHaveLength(1);
      await writer.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('after a failed write, queueing a line throws and waiting for one rejects', async () => {
    const writer = await openOnFullDisk();
    const line = writer.enqueue({ t: 'cancel', k: 'a', run: 'r', at });
    const error = await caught(writer.durable(line));
    expect(error.code).toBe('JOURNAL_WRITE');
    expect(() => writer.enqueue({ t: 'cancel', k: 'b', run: 'r', at })).toThrow(/cannot write to the journal/);
    expect((await caught(writer.durable(line))).code).toBe('JOURNAL_WRITE');
    await writer.close();
  });

  it.skipIf(process.platform !== 'linux')(
    'the journal is opened for synchronised writes (O_DSYNC), so a group is one write',
    async () => {
      let flags = 0;
      const writer = await JournalWriter.open(fresh(), {
        openFile: async (file, given, mode) => {
          flags = given;
          return open(file, given, mode);
        },
      });
      await writer.close();
      expect(flags & constants.O_DSYNC).toBe(constants.O_DSYNC);
      expect(flags & constants.O_NOFOLLOW).toBe(constants.O_NOFOLLOW);
    },
  );
});
