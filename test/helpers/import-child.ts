// Runs one import of a plan in a process of its own, so that tests can kill it at any moment
// (SIGKILL) the way a crash or a closed laptop would.
// Usage: import-child.ts PLAN STATE_DIR URL TOKEN [CONCURRENCY [STORE_URL STATE_KEY]]
import { CrmClient } from '../../src/client/index.ts';
import { announceFirstRow } from './child-rows.ts';
import { runImport } from '../../src/load/index.ts';

const [plan, stateDir, url, token, concurrency, storeUrl, stateKey] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string | undefined,
  string | undefined,
  string | undefined,
];
const client = new CrmClient({
  baseUrl: url,
  auth: token,
  retry: { limit: 8, baseDelayMs: 5, maxDelayMs: 50, maxRetryAfterMs: 5000 },
});
const summary = await runImport(
  {
    source: { kind: 'plan', planFile: plan },
    stateDir,
    concurrency: Number(concurrency ?? 4),
    stateStore: storeUrl && stateKey ? { url: storeUrl, key: stateKey } : null,
  },
  {
    client,
    account: { baseUrl: url, account: url },
    onEvent: announceFirstRow(),
  },
);
await client.close();
process.stdout.write(
  `${JSON.stringify({ stopped: summary.stopped?.code ?? null, message: summary.stopped?.message ?? null, reconciled: summary.reconciled })}\n`,
);
process.exit(summary.stopped ? 4 : 0);
