// The importer's chaos test, longer: the six-step plan four times the size, against a sandbox
// answering 5% of requests with a 5xx and dropping 3% of connections after writing, the importer
// killed with SIGKILL 40 times. Not part of `npm test` (the test suite runs a short version).
// Run it with `npm run chaos` or `npm run bench -- import-chaos [--kills N] [--scale N]`.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { kills: { type: 'string' }, scale: { type: 'string' } }, strict: false });
const root = fileURLToPath(new URL('..', import.meta.url));
const result = spawnSync(
  process.execPath,
  [`${root}node_modules/vitest/vitest.mjs`, 'run', 'test/integration/import-chaos.test.ts'],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      CHAOS_KILLS: String(values.kills ?? 40),
      CHAOS_SCALE: String(values.scale ?? 4),
      CHAOS_TIMEOUT_MS: String(30 * 60_000),
    },
  },
);
process.exit(result.status ?? 1);
