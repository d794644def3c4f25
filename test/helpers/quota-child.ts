// Claims a lease of an account's shared rate budget in a process of its own and then holds it,
// never sending, until killed: a process that dies mid-window. Usage: quota-child.ts URL ACCOUNT WINDOW_END QUOTA COUNT
import { PostgresQuota } from '../../src/journal/index.ts';

const [url, account, windowEnd, quota, count] = process.argv.slice(2) as [string, string, string, string, string];
const store = await PostgresQuota.open({ url });
const grant = await store.claim(account, {
  windowEnd: Number(windowEnd),
  quota: Number(quota),
  count: Number(count),
  floor: 0,
  limitPerHour: 144_000,
});
process.stdout.write(`${JSON.stringify(grant)}\n`);
// Held open (its connection too) until the test kills it.
setInterval(() => undefined, 60_000);
