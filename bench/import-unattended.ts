// The unattended run at full size: one `crm-ferry run` of the six-step plan with 5,000 rows,
// against a sandbox answering 10% of requests with a 5xx and dropping 5% of answers after
// writing, with OAuth tokens of 3 seconds, killed and started again on its data file twice.
// It must exit 0 with every row in the account once. Not part of `npm test` (the suite runs
// 915 rows). Run it with `npm run chaos` or `npm run bench -- import-unattended [--rows N]`.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { rows: { type: 'string' } }, strict: false });
const root = fileURLToPath(new URL('..', import.meta.url));
// The suite's plan has 305 rows at scale 1.
const scale = Number(values.rows ?? 5000) / 305;
const result = spawnSync(
  process.execPath,
  [`${root}node_modules/vitest/vitest.mjs`, 'run', 'test/integration/import-unattended.test.ts'],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, UNATTENDED_SCALE: String(scale), UNATTENDED_TIMEOUT_MS: String(30 * 60_000) },
  },
);
process.exit(result.status ?? 1);
