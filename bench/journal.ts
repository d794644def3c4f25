// How fast the run journal loads and takes appends. Not a test; run it with
// `npm run bench -- journal [--rows N]`. A journal of N rows (an intent with a ~300-byte body and
// its result per row, as an import writes them) is written once, then loaded in a fresh process
// (what a resumed run does first); appends are measured at 16 concurrent writers, each waiting
// for its line to be durable, as the importer's requests do.
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { JournalWriter, loadJournal, type JournalEntry } from '../src/journal/index.ts';
import { formatCount, spawnTsx } from './harness.ts';

const { values } = parseArgs({ options: { rows: { type: 'string' }, child: { type: 'string' } }, strict: false });

if (typeof values.child === 'string') {
  const started = performance.now();
  const loaded = await loadJournal(values.child);
  const seconds = (performance.now() - started) / 1000;
  console.log(
    JSON.stringify({
      rows: loaded.rows.size,
      lines: loaded.lines,
      seconds,
      rssMb: Math.round(process.memoryUsage().rss / 2 ** 20),
    }),
  );
} else {
  const rows = Number(values.rows ?? 1_000_000);
  const file = join(tmpdir(), `crm-ferry-bench-journal-${process.pid}.jsonl`);
  try {
    const body = (i: number): Record<string, unknown> => ({
      type: 'person',
      firstName: `First${i}`,
      lastName: `Last${i}`,
      jobTitle: 'Head of Procurement',
      emailAddresses: [{ type: 'Work', address: `person${i}@example.org` }],
      phoneNumbers: [{ type: 'Work', number: '+442071234567' }],
      organisation: { id: 100_000 + (i % 5000) },
      tags: [{ name: 'customer' }, { name: 'newsletter' }],
      fields: [{ definition: 12, value: '2023-01-15' }],
    });
    const writer = await JournalWriter.open(file, { maxBatch: 4096 });
    const at = new Date().toISOString();
    const write = performance.now();
    for (let i = 0; i < rows; i += 2048) {
      const batch: Array<Promise<void>> = [];
      for (let j = i; j < Math.min(rows, i + 2048); j += 1) {
        batch.push(
          writer.append({
            t: 'intent',
            k: `row-${j}`,
            op: 'create',
            run: 'r1',
            at,
            fp: 'abcdefghijklmnopqrstuv',
            body: body(j),
          }),
        );
        batch.push(
          writer.append({
            t: 'done',
            k: `row-${j}`,
            op: 'create',
            run: 'r1',
            at,
            id: 1_000_000 + j,
            fp: 'abcdefghijklmnopqrstuv',
          }),
        );
      }
      await Promise.all(batch);
    }
    await writer.close();
    const writeSeconds = (performance.now() - write) / 1000;
    const load = JSON.parse(
      spawnTsx(import.meta.url, ['--child', file])
        .trim()
        .split('\n')
        .pop() ?? '{}',
    ) as { rows: number; lines: number; seconds: number; rssMb: number };

    // Durable appends, 16 writers each waiting for its own line.
    const appendFile = `${file}.appends`;
    const appender = await JournalWriter.open(appendFile);
    const perWriter = 500;
    const entry = (k: string): JournalEntry => ({
      t: 'intent',
      k,
      op: 'create',
      run: 'r2',
      at,
      fp: 'abcdefghijklmnopqrstuv',
      body: body(1),
    });
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 16 }, async (_, w) => {
        for (let i = 0; i < perWriter; i += 1) await appender.append(entry(`w${w}-${i}`));
      }),
    );
    const appendSeconds = (performance.now() - started) / 1000;
    const syncs = appender.syncs;
    await appender.close();
    rmSync(appendFile, { force: true });
    console.log(
      JSON.stringify({
        bench: 'journal',
        rows,
        writeSeconds: Number(writeSeconds.toFixed(1)),
        loadSeconds: Number(load.seconds.toFixed(2)),
        loadRssMb: load.rssMb,
        durableAppendsPerSecond: Math.round((16 * perWriter) / appendSeconds),
        linesPerFsync: Number(((16 * perWriter) / syncs).toFixed(1)),
      }),
    );
    console.log(
      `journal of ${formatCount(rows)} rows (${formatCount(load.lines)} lines): loads in ${load.seconds.toFixed(2)} s, ${load.rssMb} MB; durable appends at 16 writers: ${formatCount((16 * perWriter) / appendSeconds)}/s, ${((16 * perWriter) / syncs).toFixed(1)} lines per fsync`,
    );
  } finally {
    rmSync(file, { force: true });
  }
}
