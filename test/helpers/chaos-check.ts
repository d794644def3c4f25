import type { ChaosPlan } from './chaos-plan.ts';
import { allPages as all, type TestSandbox } from './sandbox.ts';

export interface ChaosFigures {
  rows: number;
  missing: number;
  duplicated: number;
  differing: number;
  /** What differed, for the test's message. */
  problems: string[];
}

/**
 * Compares what the account holds with the generated rows: every row must be there exactly once
 * (found by a value unique to it), with its fields and links as the row says.
 */
export async function checkChaos(box: TestSandbox, plan: ChaosPlan): Promise<ChaosFigures> {
  const figures: ChaosFigures = { rows: 0, missing: 0, duplicated: 0, differing: 0, problems: [] };
  const parties = await all(box, '/parties?embed=tags,fields', 'parties');
  const opportunities = await all(box, '/opportunities', 'opportunities');
  const kases = await all(box, '/kases', 'kases');
  const entries = await all(box, '/entries', 'entries');
  const tasks = await all(box, '/tasks?status=open,completed,pending&embed=party', 'tasks');
  const orgIds = new Map<string, number>();
  const personIds = new Map<string, number>();

  const one = <T>(label: string, found: T[]): T | undefined => {
    figures.rows += 1;
    if (found.length === 0) {
      figures.missing += 1;
      figures.problems.push(`${label}: missing`);
      return undefined;
    }
    if (found.length > 1) {
      figures.duplicated += 1;
      figures.problems.push(`${label}: ${found.length} copies`);
    }
    return found[0];
  };
  const same = (label: string, what: string, actual: unknown, expected: unknown): void => {
    if (JSON.stringify(actual) === JSON.stringify(expected)) return;
    figures.differing += 1;
    figures.problems.push(`${label}: ${what} is ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
  };
  // The service matches tag names without regard to case (a row's "customer" is the account's "Customer").
  const tagsOf = (record: any): string[] => (record.tags ?? []).map((t: any) => String(t.name).toLowerCase()).sort();
  const split = (text: string | undefined): string[] =>
    text ? text.toLowerCase().split(';').filter(Boolean).sort() : [];
  const field = (record: any, name: string): unknown =>
    record.fields?.find((f: any) => f.definition?.name === name)?.value;

  for (const row of plan.rows.organisations) {
    const org = one(
      `organisation ${row.id}`,
      parties.filter((p) => p.type === 'organisation' && p.name === row.name),
    );
    if (!org) continue;
    orgIds.set(row.id as string, org.id);
    same(`organisation ${row.id}`, 'tags', tagsOf(org), split(row.tags));
    same(`organisation ${row.id}`, 'Industry', field(org, 'Industry'), row.industry);
  }
  for (const row of plan.rows.people) {
    const person = one(
      `person ${row.id}`,
      parties.filter((p) => p.type === 'person' && p.emailAddresses?.[0]?.address === row.email),
    );
    if (!person) continue;
    personIds.set(row.id as string, person.id);
    same(`person ${row.id}`, 'lastName', person.lastName, row.last);
    same(`person ${row.id}`, 'organisation', person.organisation?.id, orgIds.get(row.org as string));
    same(`person ${row.id}`, 'tags', tagsOf(person), split(row.tags));
    same(`person ${row.id}`, 'VIP', field(person, 'VIP'), row.vip === 'yes' ? true : false);
  }
  for (const row of plan.rows.opportunities) {
    const deal = one(
      `opportunity ${row.id}`,
      opportunities.filter((o) => o.name === row.name),
    );
    if (!deal) continue;
    same(`opportunity ${row.id}`, 'party', deal.party?.id, orgIds.get(row.org as string));
    same(`opportunity ${row.id}`, 'milestone', deal.milestone?.name, row.milestone);
    same(`opportunity ${row.id}`, 'amount', deal.value?.amount, Number(row.amount));
  }
  for (const row of plan.rows.projects) {
    const kase = one(
      `project ${row.id}`,
      kases.filter((k) => k.name === row.name),
    );
    if (!kase) continue;
    same(`project ${row.id}`, 'party', kase.party?.id, personIds.get(row.person as string));
    same(`project ${row.id}`, 'owner', kase.owner?.username, row.owner);
  }
  for (const row of plan.rows.notes) {
    const note = one(
      `note ${row.id}`,
      entries.filter((e) => e.content === row.text),
    );
    if (!note) continue;
    same(`note ${row.id}`, 'party', note.party?.id, personIds.get(row.person as string));
    same(`note ${row.id}`, 'attachments', (note.attachments ?? []).length, row.file ? 1 : 0);
  }
  for (const row of plan.rows.tasks) {
    const task = one(
      `task ${row.id}`,
      tasks.filter((t) => t.description === row.what),
    );
    if (!task) continue;
    same(`task ${row.id}`, 'party', task.party?.id, personIds.get(row.person as string));
    same(`task ${row.id}`, 'dueOn', task.dueOn, row.due);
  }
  return figures;
}
