// A sandbox state holding 2 GiB of attachments saves and reloads: uploads of 8 MiB, each attached
// to a note and synced before its answer, then close (the final snapshot), a restart on the same
// files, and every attachment read back and checked. In a temporary folder, removed afterwards.
// Not part of `npm test` (the storage test runs the same at 48 MiB).
// Usage: npm run bench -- sandbox-attachments [--total-mib N] [--each-mib N]
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fillWithAttachments } from '../test/helpers/attachment-fill.ts';

const { values } = parseArgs({
  options: { 'total-mib': { type: 'string', default: '2048' }, 'each-mib': { type: 'string', default: '8' } },
  strict: false,
});
const totalMiB = Number(values['total-mib']);
const eachMiB = Number(values['each-mib']);
if (!(totalMiB > 0 && eachMiB > 0 && eachMiB <= 10))
  throw new Error('--total-mib takes a positive number, --each-mib one up to 10');
const dir = await mkdtemp(join(tmpdir(), 'ferry-attachments-'));
try {
  const load = loadavg()[0];
  const figures = await fillWithAttachments({
    file: join(dir, 'state.json'),
    totalBytes: totalMiB * 2 ** 20,
    eachBytes: eachMiB * 2 ** 20,
  });
  console.log(
    JSON.stringify({
      bench: 'sandbox-attachments',
      ...figures,
      problems: figures.problems.length,
      loadAverage1m: load,
      node: process.version,
    }),
  );
  for (const problem of figures.problems) console.error(problem);
  console.log(
    `${figures.totalMiB} MiB in ${figures.attachments} attachments: written in ${figures.writeSeconds} s ` +
      `(${Math.round(figures.totalMiB / figures.writeSeconds)} MiB/s synced), saved in ${figures.closeSeconds} s, ` +
      `reloaded in ${figures.reloadSeconds} s, read back and checked in ${figures.verifySeconds} s; snapshot ` +
      `${figures.snapshotBytes} bytes, ${figures.blobFiles} blob files, ${figures.problems.length} problems; ` +
      `peak RSS ${figures.peakRssMiB} MiB (load average ${load})`,
  );
  process.exitCode = figures.problems.length > 0 ? 1 : 0;
} finally {
  await rm(dir, { recursive: true, force: true });
}
