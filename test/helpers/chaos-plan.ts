import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seededRandom } from '../../src/util/seeded-random.ts';

/** How many rows each step of the generated plan has. */
export interface ChaosSizes {
  organisations: number;
  people: number;
  opportunities: number;
  projects: number;
  notes: number;
  tasks: number;
}

export const SMALL: ChaosSizes = {
  organisations: 30,
  people: 120,
  opportunities: 30,
  projects: 25,
  notes: 60,
  tasks: 40,
};

function csv(rows: string[][]): string {
  return `${rows.map((row) => row.map((cell) => (/[",\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell)).join(',')).join('\n')}\n`;
}

const MAPPINGS: Record<string, string> = {
  'organisations.yaml': `version: 1
entity: party
key: "{{id}}"
fields:
  - { to: type, value: organisation }
  - { to: name, value: { column: name }, required: true }
  - { to: tags, value: { column: tags, transform: [{ split: ";" }] } }
  - { to: custom, definition: Industry, tag: null, value: { column: industry } }
`,
  'people.yaml': `version: 1
entity: party
key: "{{id}}"
fields:
  - { to: type, value: person }
  - { to: firstName, value: { column: first } }
  - { to: lastName, value: { column: last }, required: true }
  - { to: email, type: Work, value: { column: email, transform: [email] } }
  - { to: organisation, ref: organisations, key: "{{org}}" }
  - { to: tags, value: { column: tags, transform: [{ split: ";" }] } }
  - { to: custom, definition: VIP, tag: null, value: { column: vip, transform: [boolean] } }
`,
  'opportunities.yaml': `version: 1
entity: opportunity
key: "{{id}}"
fields:
  - { to: name, value: { column: name } }
  - { to: party, ref: organisations, key: "{{org}}" }
  - { to: milestone, value: { column: milestone } }
  - { to: amount, value: { column: amount, transform: [number] } }
  - { to: currency, value: GBP }
`,
  'projects.yaml': `version: 1
entity: kase
key: "{{id}}"
fields:
  - { to: name, value: { column: name } }
  - { to: party, ref: people, key: "{{person}}" }
  - { to: owner, value: { column: owner } }
`,
  'notes.yaml': `version: 1
entity: entry
key: "{{id}}"
fields:
  - { to: party, ref: people, key: "{{person}}" }
  - { to: content, value: { column: text } }
  - { to: attachment, value: { column: file } }
`,
  'tasks.yaml': `version: 1
entity: task
key: "{{id}}"
fields:
  - { to: description, value: { column: what } }
  - { to: party, ref: people, key: "{{person}}" }
  - { to: dueOn, value: { column: due, transform: [{ date: { format: yyyy-MM-dd } }] } }
  - { to: category, value: { column: category } }
`,
};

export interface ChaosPlan {
  dir: string;
  plan: string;
  sizes: ChaosSizes;
  /** Rows per step, as generated, for checking what ended up in the account. */
  rows: Record<keyof ChaosSizes, Array<Record<string, string>>>;
}

/** Writes a plan of six steps with linked, generated rows (and attachment files) into `dir`. */
export function writeChaosPlan(dir: string, sizes: ChaosSizes, seed = 1): ChaosPlan {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  mkdirSync(join(dir, 'files'), { recursive: true });
  const rows: ChaosPlan['rows'] = {
    organisations: [],
    people: [],
    opportunities: [],
    projects: [],
    notes: [],
    tasks: [],
  };
  for (let i = 1; i <= sizes.organisations; i += 1) {
    rows.organisations.push({
      id: `O${i}`,
      name: `Chaos Org ${i} ${pick(['Ltd', 'GmbH', 'SA', 'Inc.'])}`,
      tags: pick(['customer', 'prospect;partner', '']),
      industry: pick(['Finance', 'Retail', 'Software']),
    });
  }
  for (let i = 1; i <= sizes.people; i += 1) {
    rows.people.push({
      id: `P${i}`,
      first: pick(['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara']),
      last: `Tester${i}`,
      email: `p${i}@chaos.example`,
      org: `O${1 + (i % sizes.organisations)}`,
      tags: pick(['vip', 'lead;newsletter', '']),
      vip: pick(['yes', 'no']),
    });
  }
  for (let i = 1; i <= sizes.opportunities; i += 1) {
    rows.opportunities.push({
      id: `D${i}`,
      name: `Deal ${i}`,
      org: `O${1 + (i % sizes.organisations)}`,
      milestone: pick(['New', 'Qualified', 'Proposal']),
      amount: String(1000 + i * 37),
    });
  }
  for (let i = 1; i <= sizes.projects; i += 1) {
    rows.projects.push({
      id: `K${i}`,
      name: `Project ${i}`,
      person: `P${1 + (i % sizes.people)}`,
      owner: pick(['sam', 'kim']),
    });
  }
  for (let i = 1; i <= sizes.notes; i += 1) {
    const file = i % 3 === 0 ? `files/note-${i}.txt` : '';
    if (file) writeFileSync(join(dir, file), `attachment of note ${i}\n`);
    rows.notes.push({ id: `N${i}`, person: `P${1 + (i % sizes.people)}`, text: `Chaos note ${i}`, file });
  }
  for (let i = 1; i <= sizes.tasks; i += 1) {
    rows.tasks.push({
      id: `T${i}`,
      what: `Chaos task ${i}`,
      person: `P${1 + (i % sizes.people)}`,
      due: `2031-0${1 + (i % 9)}-1${i % 10}`,
      category: pick(['Call', 'Email']),
    });
  }
  for (const [name, text] of Object.entries(MAPPINGS)) writeFileSync(join(dir, name), text);
  for (const [step, list] of Object.entries(rows)) {
    const columns = Object.keys(list[0] ?? {});
    writeFileSync(join(dir, `${step}.csv`), csv([columns, ...list.map((row) => columns.map((c) => row[c] ?? ''))]));
  }
  const plan = join(dir, 'plan.yaml');
  const step = (name: string, mapping: string): string =>
    `  - name: ${name}\n    mapping: ${mapping}.yaml\n    input: ${name}.csv\n`;
  writeFileSync(
    plan,
    `version: 1\nsteps:\n${step('organisations', 'organisations')}${step('people', 'people')}${step('opportunities', 'opportunities')}${step('projects', 'projects')}${step('notes', 'notes')}${step('tasks', 'tasks')}`,
  );
  return { dir, plan, sizes, rows };
}
