// `npm run demo`: a real migration into the sandbox. Starts the sandbox in-process (with the
// service's rate limit of 4,000 requests an hour), runs the bundled legacy-account plan
// (its set-up, then organisations, people, opportunities, projects, notes with their files, tasks
// from samples/v1) through `crm-ferry run`, shows that running it again sends no write, and where the results are.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from './cli/index.ts';
import { startSandbox } from './sandbox/index.ts';

const root = resolve(fileURLToPath(import.meta.url), '../..');
const plan = join(root, 'mappings/plans/v1-migration.yaml');
const sandbox = await startSandbox({ port: 0, rateLimit: { limit: 4000, windowSeconds: 3600 } });
const dir = await mkdtemp(join(tmpdir(), 'crm-ferry-demo-'));
const env = { ...process.env, CRM_FERRY_BASE_URL: sandbox.url, CRM_FERRY_TOKEN: sandbox.token };
const say = (text: string): void => void process.stdout.write(`${text}\n`);

try {
  say(`sandbox listening on ${sandbox.url}\n`);
  say(`$ crm-ferry run mappings/plans/v1-migration.yaml --state-dir ${join(dir, 'state')}`);
  const first = await main(['run', plan, '--state-dir', join(dir, 'state')], { env, cwd: root });
  say(`(exit code ${first})\n`);
  say('$ crm-ferry run mappings/plans/v1-migration.yaml   # again: nothing changed, so nothing is sent');
  const second = await main(['run', plan, '--state-dir', join(dir, 'state')], { env, cwd: root });
  say(`(exit code ${second})\n`);
  say(`The journal and the result files stay in ${join(dir, 'state')} until this demo ends; in a real`);
  say('migration they live in .crm-ferry/ beside your plan (.crm-ferry/v1-migration/ here for this ready-made one),');
  say('and `crm-ferry rollback PLAN` undoes a run.');
} finally {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
}
