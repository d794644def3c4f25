// Requests per record of reading a live legacy v1 account (`--input v1+https://HOST`): an account
// of N organisations (each with a person, an opportunity, a project, a note and a task; see
// test/helpers/backup-account.ts) read list by list through the v1 interface, in XML and in JSON,
// at the default page of 100. Each party, opportunity and project costs its custom fields and its
// tags (a request each) beside its share of a list page; a project also its additional parties;
// history costs a request per record read (its rows are the history items).
// Not a test; run it with `npm run bench -- v1-live [--rows N]`.
import { parseArgs } from 'node:util';
import { Transport, V1Reader } from '../src/client/index.ts';
import { readV1Live } from '../src/sources/index.ts';
import { seedBackupAccount } from '../test/helpers/backup-account.ts';
import { startTestSandbox } from '../test/helpers/sandbox.ts';

const { values } = parseArgs({ options: { rows: { type: 'string' } }, strict: false });
const rows = Number(values.rows ?? 1000);

const box = await startTestSandbox();
try {
  await seedBackupAccount(box, rows);
  for (const format of ['xml', 'json'] as const) {
    for (const [list, record] of [
      ['party', 'party'],
      ['opportunity', 'opportunity'],
      ['kase', 'kase'],
      ['tasks', 'task'],
      ['party', 'historyItem'],
    ] as const) {
      const transport = new Transport({ baseUrl: box.url, auth: box.token });
      const reader = new V1Reader(transport, format);
      const started = performance.now();
      let records = 0;
      for await (const item of readV1Live(reader, { list, record })) if (item.kind === 'row') records += 1;
      const seconds = (performance.now() - started) / 1000;
      const parents = record === 'historyItem' ? rows * 2 : records;
      console.log(
        JSON.stringify({
          format,
          list,
          record,
          records,
          requestsPerParent: +(transport.requestsSent / Math.max(1, parents)).toFixed(3),
          requests: transport.requestsSent,
          seconds: +seconds.toFixed(2),
        }),
      );
      await transport.close();
    }
  }
} finally {
  await box.close();
}
