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

/** How many of each an organisation has (a book of accounts: the defaults are the benchmark's book). */
export interface BookShape {
  /** People of each organisation. @default 1 */
  people?: number;
  /** Notes of each person. @default 1 */
  notes?: number;
  /** Projects of each organisation. @default 1 */
  projects?: number;
  /** Additional parties of each project: the organisation's people, in turn. @default 1 */
  contacts?: number;
  /** Every how many notes one has an attachment. @default 5 */
  attachmentEvery?: number;
  /** Every how many projects one has a track. @default 3 */
  trackEvery?: number;
}

export async function seedBackupAccount(
  box: TestSandbox,
  count: number,
  shape: BookShape = {},
): Promise<SeededAccount> {
  const every = shape.attachmentEvery ?? 5;
  const trackEvery = shape.trackEvery ?? 3;
  const out: SeededAccount = {
    organisations: [],
    people: [],
    opportunities: [],
    kases: [],
    entries: [],
    attachments: 0,
  };
  const definitions = (await ok(box, 'GET', '/trackdefinitions')).trackDefinitions as Array<{
    id: number;
    captureRule: string;
  }>;
  const kaseTrack = definitions.find((d) => d.captureRule === 'KASE')?.id;
  const milestones = (await ok(box, 'GET', '/milestones')).milestones as Array<{ id: number }>;
  // A suffix for the second and later of a kind; the first of each keeps the names of the one-of-each book.
  const nth = (n: number) => (n === 0 ? '' : `.${n}`);
  let notes = 0;
  let projects = 0;
  for (let i = 0; i < count; i += 1) {
    const org = (
      await ok(box, 'POST', '/parties', {
        party: {
          type: 'organisation',
          name: `Company ${i}`,
          about: `Customer number ${i}`,
          tags: [{ name: i % 2 ? 'VIP' : 'Lead' }],
          emailAddresses: [{ type: 'Work', address: `info${i}@example.test` }],
        },
      })
    ).party;
    out.organisations.push(org.id);
    const people: number[] = [];
    for (let p = 0; p < (shape.people ?? 1); p += 1) {
      const person = (
        await ok(box, 'POST', '/parties', {
          party: {
            type: 'person',
            firstName: `Ann${i}${nth(p)}`,
            lastName: `Smith`,
            jobTitle: 'Buyer',
            organisation: { id: org.id },
            phoneNumbers: [{ type: 'Work', number: `+44 20 7946 ${String(i).padStart(4, '0')}` }],
          },
        })
      ).party;
      people.push(person.id);
      out.people.push(person.id);
    }
    const opportunity = (
      await ok(box, 'POST', '/opportunities', {
        opportunity: {
          name: `Deal ${i}`,
          description: 'Licences',
          party: { id: org.id },
          milestone: { id: milestones[i % milestones.length]!.id },
          value: { amount: 1000 + i, currency: 'GBP' },
          expectedCloseOn: '2027-01-15',
        },
      })
    ).opportunity;
    out.opportunities.push(opportunity.id);
    for (let k = 0; k < (shape.projects ?? 1); k += 1) {
      const tracked = projects % trackEvery === 0 && kaseTrack;
      projects += 1;
      const kase = (
        await ok(box, 'POST', '/kases', {
          kase: {
            name: `Project ${i}${nth(k)}`,
            description: 'Roll-out',
            party: { id: org.id },
            ...(tracked ? { tracks: [{ definition: kaseTrack }] } : {}),
          },
        })
      ).kase;
      out.kases.push(kase.id);
      for (let c = 0; c < Math.min(shape.contacts ?? 1, people.length); c += 1)
        await ok(box, 'POST', `/kases/${kase.id}/parties/${people[(k + c) % people.length]}`);
    }
    for (const [p, person] of people.entries()) {
      for (let n = 0; n < (shape.notes ?? 1); n += 1) {
        let attachments: Array<{ token: string }> = [];
        if (notes % every === 0) {
          const upload = await box.call('POST', '/api/v2/attachments/upload', {
            rawBody: Buffer.from(`minutes of meeting ${i}\n`.repeat(20)),
            headers: {
              'content-type': 'text/plain',
              'x-attachment-filename': encodeURIComponent(`minutes ${i}${nth(p)}${nth(n)}.txt`),
            },
          });
          attachments = [{ token: (upload.body as { upload: { token: string } }).upload.token }];
          out.attachments += 1;
        }
        notes += 1;
        const entry = (
          await ok(box, 'POST', '/entries', {
            entry: {
              type: 'note',
              content: `Met ${i}${nth(p)}${nth(n)}`,
              party: { id: person },
              activityType: -2,
              ...(attachments.length ? { attachments } : {}),
            },
          })
        ).entry;
        out.entries.push(entry.id);
      }
      await ok(box, 'POST', '/tasks', {
        task: { description: `Call back ${i}${nth(p)}`, party: { id: person }, dueOn: '2027-02-01' },
      });
    }
  }
  return out;
}
