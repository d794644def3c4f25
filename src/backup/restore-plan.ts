/**
 * The plan a restore runs: the round-trip mappings of mappings/ as they are, each over a CSV file
 * the restore writes from the backup (restore-inputs.ts), with what differs for a restore said
 * here and in the plan, once: the record steps find what the account holds already (`match`, rows
 * of one name separate records), and the set-up creates the backup's configuration the account
 * lacks. The same backup gives the same plan, so a resumed restore continues the same one.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import type { MatchSpec } from '../mapping/index.ts';
import type { SetupSpec } from '../plan/index.ts';
import { writeFileAtomic } from '../files/index.ts';
import { BACKUP_FILE_MODE } from './format.ts';
import type { Backup } from './read-backup.ts';
import { type Body, idOf } from './record-fields.ts';

/** The folder of the bundled mappings, which the restore's plan names. */
export const MAPPINGS = fileURLToPath(new URL('../../mappings/', import.meta.url));

type MatchRule = Omit<MatchSpec, 'onMatch'> & { onMatch: 'update' };

/**
 * The steps, each a round-trip mapping over the CSV file it reads, and for the records entries and
 * tasks hang on, how a record the account has already is found (so that a restore into an account
 * that holds the records, with another state folder, adopts them instead of adding them again).
 * Names match within the record they hang on: an opportunity or project of the same name on
 * another party, a person of the same name at another organisation, is someone else's.
 */
export const RESTORE_STEPS = [
  {
    name: 'organisations',
    mapping: 'roundtrip-organisations.yaml',
    input: 'parties.csv',
    match: { by: 'name', onMatch: 'update' },
  },
  {
    name: 'people',
    mapping: 'roundtrip-people.yaml',
    input: 'parties.csv',
    match: { by: ['email', 'name'], within: 'organisation', onMatch: 'update' },
  },
  {
    name: 'opportunities',
    mapping: 'roundtrip-opportunities.yaml',
    input: 'opportunities.csv',
    match: { by: 'name', within: 'party', onMatch: 'update' },
  },
  {
    name: 'kases',
    mapping: 'roundtrip-kases.yaml',
    input: 'kases.csv',
    match: { by: 'name', within: 'party', onMatch: 'update' },
  },
  { name: 'entries', mapping: 'roundtrip-entries.yaml', input: 'entries.csv', match: null },
  { name: 'tasks', mapping: 'roundtrip-tasks.yaml', input: 'tasks.csv', match: null },
] as const satisfies ReadonlyArray<{ name: string; mapping: string; input: string; match: MatchRule | null }>;

export type RestoreStep = (typeof RESTORE_STEPS)[number];
/** The steps of the records entries and tasks hang on: run first, so that what they matched is known. */
export const RECORD_STEPS = RESTORE_STEPS.filter((s) => s.match !== null);

/** The set-up block of the plan: the configuration of the backup that the interface can create; what the target has is left alone. */
export async function setupOfBackup(backup: Backup, activityTypesNeeded: readonly string[]): Promise<SetupSpec> {
  const pipelines = await backup.read('pipelines.jsonl');
  const active = new Set(pipelines.map((p) => p.id as number));
  const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
  const FOR = { PARTY: 'parties', OPPORTUNITY: 'opportunities', KASE: 'kases' } as const;
  const types = (await backup.read('activity-types.jsonl'))
    // The built-in types (negative ids: Note, Meeting, Call) every account has.
    .filter((a) => typeof a.id === 'number' && a.id > 0)
    .map((a) => ({
      name: String(a.name),
      ...(text((a.icon as Body | null)?.id) ? { icon: String((a.icon as Body).id) } : {}),
      ...(typeof a.updateLastContacted === 'boolean' ? { updateLastContacted: a.updateLastContacted } : {}),
    }));
  for (const name of activityTypesNeeded)
    if (!types.some((t) => t.name.toLowerCase() === name.toLowerCase()))
      types.push({ name, icon: name === 'Email' ? 'MAIL' : 'CLIPBOARD' });
  return {
    derive: false,
    pipelines: pipelines.map((p) => ({
      name: String(p.name),
      ...(text(p.description) ? { description: String(p.description) } : {}),
    })),
    milestones: (await backup.read('milestones.jsonl'))
      .filter((m) => active.has(idOf(m.pipeline) ?? -1))
      .map((m) => ({
        name: String(m.name),
        pipeline: String((m.pipeline as Body).name),
        ...(typeof m.probability === 'number' ? { probability: m.probability } : {}),
        ...(typeof m.complete === 'boolean' ? { complete: m.complete } : {}),
        ...(text(m.description) ? { description: String(m.description) } : {}),
      })),
    activityTypes: types,
    trackDefinitions: (await backup.read('track-definitions.jsonl')).map((t) => ({
      description: String(t.description),
      ...(FOR[t.captureRule as keyof typeof FOR] ? { for: FOR[t.captureRule as keyof typeof FOR] } : {}),
      tasks: ((t.taskDefinitions as Body[] | undefined) ?? [])
        .slice()
        .sort((x, y) => Number(x.displayOrder ?? 0) - Number(y.displayOrder ?? 0))
        .map((d) => ({
          description: String(d.description),
          daysAfter: typeof d.daysAfter === 'number' ? d.daysAfter : 0,
          daysAfterRule: d.daysAfterRule === 'LAST_TASK' ? ('LAST_TASK' as const) : ('TRACK_START' as const),
        })),
    })),
  };
}

/** Writes the plan: its set-up, then the steps given (the records alone first, then all of them). */
export async function writeRestorePlan(work: string, setup: SetupSpec, steps: readonly RestoreStep[]): Promise<string> {
  const plan = join(work, 'plan.yaml');
  const head = [
    '# Written by crm-ferry restore from a backup; run, verify and roll back it like any plan. The',
    '# steps are the round-trip mappings of crm-ferry, each over a file of this folder, each record',
    '# keyed by its id in the backed-up account; a record the account has already is found by its',
    "# step's `match` and brought to the backup's values instead of being added again. The set-up",
    '# creates the configuration of the backup that the account lacks (rollback removes it).',
    '',
  ].join('\n');
  const body = stringify({
    version: 1,
    setup,
    steps: steps.map((s) => ({
      name: s.name,
      mapping: join(MAPPINGS, s.mapping),
      input: s.input,
      ...(s.match ? { match: s.match, onDuplicate: 'separate' } : {}),
    })),
  });
  await writeFileAtomic(plan, `${head}${body}`, { mode: BACKUP_FILE_MODE });
  return plan;
}
