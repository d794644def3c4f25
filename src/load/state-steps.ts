import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FerryError } from '../errors/index.ts';
import { ENTITIES, type Entity } from '../mapping/index.ts';

/** The file beside the journals that says which steps a state holds, in run order, and their kinds. */
const STEPS_FILE = 'steps.json';

export interface StateStep {
  name: string;
  entity: Entity;
  /** The plan, or the mapping of a one-file import, whose runs write the step's journal (absolute). */
  source?: string;
}

export interface StateSteps {
  steps: StateStep[];
}

/** Records which steps (and of what kind) a state holds, in the order a run writes them. */
export async function writeStateSteps(dir: string, steps: StateStep[]): Promise<void> {
  const known = await readStateSteps(dir).catch(() => ({ steps: [] }) as StateSteps);
  const merged = [...steps, ...known.steps.filter((old) => !steps.some((s) => s.name === old.name))];
  await writeFile(join(dir, STEPS_FILE), `${JSON.stringify({ steps: merged }, null, 2)}\n`, { mode: 0o600 });
}

export async function readStateSteps(dir: string): Promise<StateSteps> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(join(dir, STEPS_FILE), 'utf8'));
  } catch (error) {
    throw new FerryError('JOURNAL_CORRUPT', `${join(dir, STEPS_FILE)} is missing or unreadable: is ${dir} a state folder an import wrote?`, { location: { file: join(dir, STEPS_FILE) }, cause: error });
  }
  const steps = (parsed as StateSteps | null)?.steps;
  if (!Array.isArray(steps) || !steps.every((s) => typeof s?.name === 'string' && (ENTITIES as readonly string[]).includes(s.entity) && (s.source === undefined || typeof s.source === 'string'))) {
    throw new FerryError('JOURNAL_CORRUPT', `${join(dir, STEPS_FILE)} does not list the steps as expected`, { location: { file: join(dir, STEPS_FILE) } });
  }
  return { steps };
}
