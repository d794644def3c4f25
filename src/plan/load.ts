import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import {
  closestName,
  formatYamlPath,
  isKnownTimeZone,
  isV1LiveInput,
  type LocatedYaml,
  parseLocatedYaml,
  readTextInput,
  yamlSchemaError,
} from '../util/index.ts';
import { FerryError, type ErrorLocation } from '../errors/index.ts';
import { loadMapping, type MatchSpec, type OnDuplicate, type SourceOptions, sourceSchema } from '../mapping/index.ts';
import { planSchema, planStepSchema, setupSchema, type SetupSpec } from './schema.ts';

/** One step of a loaded plan, with its files resolved. */
export interface PlanStep {
  name: string;
  /** Absolute path of the mapping file. */
  mappingFile: string;
  /** Absolute path of the input file. */
  inputFile: string;
  /** Reader options that win over the mapping's. */
  source: SourceOptions | undefined;
  /** `match` and `onDuplicate` that win over the mapping's. */
  match: MatchSpec | undefined;
  onDuplicate: OnDuplicate | undefined;
  /** Position in the plan file (0-based), and where the step is written. */
  index: number;
  location: ErrorLocation;
}

/** A plan file, checked: step names unique, files present, time zone known. */
export interface Plan {
  file: string;
  /** Time zone for mappings that do not name one; undefined leaves the mapping's default (UTC). */
  timeZone: string | undefined;
  /** In file order; see orderSteps() for the run order. */
  steps: PlanStep[];
  /** The `setup:` block, defaulted (`setup:` alone derives everything); null when the plan has none. */
  setup: SetupSpec | null;
}

const PLAN_KEYS = Object.keys(planSchema.shape);
const STEP_KEYS = Object.keys(planStepSchema.shape);
const SOURCE_KEYS = Object.keys(sourceSchema.shape);
const SETUP_KEYS = Object.keys(setupSchema.shape);

function planKeysAt(path: ReadonlyArray<PropertyKey>): readonly string[] {
  if (path.length === 0) return PLAN_KEYS;
  if (path.length === 2 && path[0] === 'steps') return STEP_KEYS;
  if (path.length === 1 && path[0] === 'setup') return SETUP_KEYS;
  if (path.length === 3 && path[2] === 'source') return SOURCE_KEYS;
  return [];
}

function locate(yaml: LocatedYaml, path: Array<string | number>): ErrorLocation {
  const location: ErrorLocation = { file: yaml.file, yamlPath: formatYamlPath(path) };
  const line = yaml.lineOf(path);
  if (line !== undefined) location.line = line;
  return location;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** Checks plan text already read; `file` is used for locations and to resolve relative paths. */
export async function parsePlan(text: string, file: string): Promise<Plan> {
  const yaml = parseLocatedYaml(text, file, 'PLAN_INVALID');
  const parsed = planSchema.safeParse(yaml.value);
  if (!parsed.success) throw yamlSchemaError(yaml, parsed.error, 'PLAN_INVALID', 'the plan is not valid', planKeysAt);
  const plan = parsed.data;
  if (plan.timeZone !== undefined && !isKnownTimeZone(plan.timeZone)) {
    throw new FerryError(
      'PLAN_INVALID',
      `unknown time zone \`${plan.timeZone}\`; expected an IANA name such as Europe/Berlin`,
      {
        location: locate(yaml, ['timeZone']),
      },
    );
  }
  const baseDir = dirname(file);
  const seen = new Map<string, number>();
  const steps: PlanStep[] = [];
  for (const [index, step] of plan.steps.entries()) {
    const earlier = seen.get(step.name);
    if (earlier !== undefined) {
      throw new FerryError(
        'PLAN_INVALID',
        `two steps are named \`${step.name}\` (steps[${earlier}] and steps[${index}]); step names must be unique`,
        {
          location: locate(yaml, ['steps', index, 'name']),
        },
      );
    }
    seen.set(step.name, index);
    const mappingFile = resolve(baseDir, step.mapping);
    // A live v1 account (v1+https://HOST) is an address, not a path; with none, the source's baseUrl (checked as the step is prepared).
    const live = step.input === undefined || isV1LiveInput(step.input);
    const inputFile = step.input === undefined ? '' : live ? step.input : resolve(baseDir, step.input);
    // Checked now, so that a typo in the last step stops the run before the first step writes.
    for (const [key, path] of live
      ? ([['mapping', mappingFile]] as const)
      : ([
          ['mapping', mappingFile],
          ['input', inputFile],
        ] as const)) {
      if (!(await isFile(path))) {
        throw new FerryError(
          'PLAN_INVALID',
          `step ${step.name}: the ${key} file ${step[key]} does not exist (looked for ${path})`,
          {
            location: locate(yaml, ['steps', index, key]),
            hint: 'Paths in a plan are relative to the plan file.',
          },
        );
      }
    }
    // Only a live account named by the source (format: v1-api, baseUrl) needs no input; a mapping
    // that does not load says so, with its own location, when the step is prepared.
    const liveSource = async (): Promise<boolean> =>
      (await loadMapping(mappingFile).catch(() => undefined))?.source?.format === 'v1-api';
    if (step.input === undefined && step.source?.format !== 'v1-api' && !(await liveSource())) {
      throw new FerryError('PLAN_INVALID', 'the plan is not valid: `input` is required', {
        location: { ...locate(yaml, ['steps', index]), yamlPath: formatYamlPath(['steps', index, 'input']) },
        hint: 'Give the step an input: a file (relative to the plan), or v1+https://HOST for a live legacy account.',
      });
    }
    steps.push({
      name: step.name,
      mappingFile,
      inputFile,
      source: step.source,
      match: step.match,
      onDuplicate: step.onDuplicate,
      index,
      location: locate(yaml, ['steps', index]),
    });
  }
  // `setup:` with nothing under it (YAML null) asks for the derived set-up alone.
  const setup = plan.setup === undefined ? null : setupSchema.parse(plan.setup ?? {});
  return { file, timeZone: plan.timeZone, steps, setup };
}

/** Reads and checks a plan file. Every problem is a PLAN_INVALID error with file, line and YAML path. */
export async function loadPlan(file: string): Promise<Plan> {
  let text: string;
  try {
    text = await readTextInput(
      file,
      'the plan file',
      (message) => new FerryError('PLAN_INVALID', message, { location: { file } }),
    );
  } catch (error) {
    if (error instanceof FerryError) throw error;
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new FerryError(
      'PLAN_INVALID',
      missing ? `the plan file ${file} does not exist` : `cannot read the plan file ${file}`,
      {
        location: { file },
        cause: error,
      },
    );
  }
  return parsePlan(text.replace(/^\uFEFF/, ''), file);
}

/** Finds a step by name, with "did you mean" when there is none. */
export function findStep(plan: Plan, name: string): PlanStep {
  const step = plan.steps.find((s) => s.name === name);
  if (step) return step;
  const suggestion = closestName(
    name,
    plan.steps.map((s) => s.name),
  );
  throw new FerryError(
    'PLAN_INVALID',
    `the plan has no step \`${name}\`${suggestion ? `; did you mean \`${suggestion}\`?` : ''}`,
    {
      location: { file: plan.file },
    },
  );
}
