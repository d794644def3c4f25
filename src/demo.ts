// `npm run demo`: starts the sandbox in-process and walks through what crm-ferry does with it
// today: writes a small account through the client (organisation, people, project with a track,
// opportunity, note with an attachment), reads it back with a filter and a search, and shows the
// rate-limit governor's view. Replaced by an import demo once the importer exists.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrmClient } from './client/index.ts';
import { startSandbox } from './sandbox/index.ts';

const sandbox = await startSandbox({ port: 0, rateLimit: { limit: 4000, windowSeconds: 3600 } });
const client = new CrmClient({ baseUrl: sandbox.url, auth: sandbox.token });
const dir = await mkdtemp(join(tmpdir(), 'crm-ferry-demo-'));
const say = (text: string): void => {
  process.stdout.write(`${text}\n`);
};

try {
  say(`sandbox listening on ${sandbox.url}`);
  const org = await client.parties.create({
    type: 'organisation',
    name: 'Acme Widgets Ltd',
    addresses: [{ type: 'Office', street: '1 Market Street', city: 'Leeds', zip: 'LS1 6DT', country: 'United Kingdom' }],
  });
  const people = [];
  for (const [firstName, lastName, jobTitle] of [
    ['Ada', 'Lovelace', 'Head of Engineering'],
    ['Grace', 'Hopper', 'Purchasing'],
  ] as const) {
    people.push(
      await client.parties.create({
        type: 'person',
        firstName,
        lastName,
        jobTitle,
        organisation: { id: org.id },
        emailAddresses: [{ type: 'Work', address: `${firstName.toLowerCase()}@acme.example` }],
      }),
    );
  }
  say(`created organisation #${org.id} with ${people.length} people`);

  const milestones = await client.milestones.list().next();
  const opportunity = await client.opportunities.create({
    name: 'Widget framework licence',
    party: { id: org.id },
    milestone: { id: (milestones.value as { id: number }).id },
    value: { amount: 12500, currency: 'GBP' },
  });
  say(`created opportunity #${opportunity.id} "${opportunity.name}" worth ${opportunity.value?.amount} ${opportunity.value?.currency}`);

  const definitions = await client.trackDefinitions.list().next();
  const kase = await client.kases.create({ name: 'Onboarding Acme', party: { id: org.id }, tracks: [{ definition: (definitions.value as { id: number }).id }] });
  const tasks = [];
  for await (const task of client.tasks.list({ query: { status: 'open,pending' } })) tasks.push(task.description);
  say(`created project #${kase.id} "${kase.name}"; its onboarding track made the tasks: ${tasks.join(', ')}`);

  const file = join(dir, 'minutes.txt');
  await writeFile(file, 'Kick-off meeting minutes\n');
  const token = await client.upload(file, { contentType: 'text/plain' });
  const note = await client.entries.create({ type: 'note', party: { id: org.id }, content: 'Kick-off held; minutes attached.', attachments: [{ token }] });
  say(`filed note #${note.id} with attachment "${note.attachments?.[0]?.filename}"`);

  const found = [];
  for await (const party of client.filter('parties', { conditions: [{ field: 'org.name', operator: 'is', value: 'Acme Widgets Ltd' }] })) found.push(party);
  say(`filter "org.name is Acme Widgets Ltd" finds: ${found.map((p) => `${p.firstName} ${p.lastName}`).join(', ')}`);
  const searched = [];
  for await (const party of client.parties.search('LS1 6DT')) searched.push(party);
  say(`search "LS1 6DT" finds: ${searched.map((p) => p.name ?? `${p.firstName} ${p.lastName}`).join(', ')}`);

  const state = client.transport.governor.state();
  say(`rate limit: ${state.remaining} of ${state.limitPerHour} requests left this hour`);
} finally {
  await client.close();
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
}
