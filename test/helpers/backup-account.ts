/**
 * Fills a sandbox through the v2 interface with an account worth backing up: organisations with
 * people, opportunities, projects with an additional party and a track, notes (some with an
 * attachment), tasks. Shared by the backup tests and `npm run bench -- backup`.
 */
import type { TestSandbox } from './sandbox.ts';

export interface SeededAccount {
  organisations: number[];
  people: number[];
  opportunities: number[];
  kases: number[];
  entries: number[];
  attachments: number;
}

async function ok<T = any>(box: TestSandbox, method: string, path: string, body?: unknown): Promise<T> {
  const answer = await box.v2(method, path, body);
  if (answer.status >= 300) throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text}`);
  return answer.body as T;
}

export async function seedBackupAccount(box: TestSandbox, count: number, options: { attachmentEvery?: number } = {}): Promise<SeededAccount> {
  const every = options.attachmentEvery ?? 5;
  const out: SeededAccount = { organisations: [], people: [], opportunities: [], kases: [], entries: [], attachments: 0 };
  const definitions = (await ok(box, 'GET', '/trackdefinitions')).trackDefinitions as Array<{ id: number; captureRule: string }>;
  const kaseTrack = definitions.find((d) => d.captureRule === 'KASE')?.id;
  const milestones = (await ok(box, 'GET', '/milestones')).milestones as Array<{ id: number }>;
  for (let i = 0; i < count; i += 1) {
    const org = (await ok(box, 'POST', '/parties', { party: { type: 'organisation', name: `Company ${i}`, about: `Customer number ${i}`, tags: [{ name: i % 2 ? 'VIP' : 'Lead' }], emailAddresses: [{ type: 'Work', address: `info${i}@example.test` }] } })).party;
    const person = (await ok(box, 'POST', '/parties', { party: { type: 'person', firstName: `Ann${i}`, lastName: `Smith`, jobTitle: 'Buyer', organisation: { id: org.id }, phoneNumbers: [{ type: 'Work', number: `+44 20 7946 ${String(i).padStart(4, '0')}` }] } })).party;
    out.organisations.push(org.id);
    out.people.push(person.id);
    const opportunity = (await ok(box, 'POST', '/opportunities', { opportunity: { name: `Deal ${i}`, description: 'Licences', party: { id: org.id }, milestone: { id: milestones[i % milestones.length]!.id }, value: { amount: 1000 + i, currency: 'GBP' }, expectedCloseOn: '2027-01-15' } })).opportunity;
    out.opportunities.push(opportunity.id);
    const kase = (await ok(box, 'POST', '/kases', { kase: { name: `Project ${i}`, description: 'Roll-out', party: { id: org.id }, ...(i % 3 === 0 && kaseTrack ? { tracks: [{ definition: kaseTrack }] } : {}) } })).kase;
    out.kases.push(kase.id);
    await ok(box, 'POST', `/kases/${kase.id}/parties/${person.id}`);
    let attachments: Array<{ token: string }> = [];
    if (i % every === 0) {
      const upload = await box.call('POST', '/api/v2/attachments/upload', { rawBody: Buffer.from(`minutes of meeting ${i}\n`.repeat(20)), headers: { 'content-type': 'text/plain', 'x-attachment-filename': encodeURIComponent(`minutes ${i}.txt`) } });
      attachments = [{ token: (upload.body as { upload: { token: string } }).upload.token }];
      out.attachments += 1;
    }
    const entry = (await ok(box, 'POST', '/entries', { entry: { type: 'note', content: `Met ${i}`, party: { id: person.id }, activityType: -2, ...(attachments.length ? { attachments } : {}) } })).entry;
    out.entries.push(entry.id);
    await ok(box, 'POST', '/tasks', { task: { description: `Call back ${i}`, party: { id: person.id }, dueOn: '2027-02-01' } });
  }
  return out;
}
