// Runs one restore in a process of its own, so that tests can kill it at any moment (SIGKILL).
// Usage: restore-child.ts BACKUP_DIR URL TOKEN WORK_DIR [STEP]. Prints "writing" once the first row
// (of STEP, when given) is written.
import { runRestore } from '../../src/backup/index.ts';
import { CrmClient } from '../../src/client/index.ts';
import { announceFirstRow } from './child-rows.ts';

const [from, url, token, workDir, step] = process.argv.slice(2) as [string, string, string, string, string | undefined];
const client = new CrmClient({
  baseUrl: url,
  auth: token,
  retry: { limit: 8, baseDelayMs: 5, maxDelayMs: 50, maxRetryAfterMs: 5000 },
});
const summary = await runRestore(
  { from, workDir, concurrency: 2 },
  {
    client,
    account: { baseUrl: url, account: url },
    onEvent: announceFirstRow(step),
  },
);
await client.close();
process.stdout.write(`${JSON.stringify({ stopped: summary.import.stopped?.code ?? null })}\n`);
process.exit(summary.import.stopped ? 4 : 0);
