/**
 * The project folder the workbench works on: the customer's input files, the mappings, the plan
 * and the state folder, all ordinary files that the command line reads the same way. Every name
 * the page sends is resolved inside the folder through `pathInside` (the untrusted-path rule);
 * every file written is written fresh (`writeFileAtomic`).
 */
import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, extname, join, relative, resolve, sep } from 'node:path';
import { isMap, isSeq, parseDocument, YAMLMap, type Document } from 'yaml';
import { FerryError } from '../errors/index.ts';
import { isV1LiveInput, pathInside, writeFileAtomic } from '../util/index.ts';
import type { FilesView, InputFile, InputKind } from './api.ts';

/** The plan the workbench keeps in the folder: `crm-ferry run plan.yaml` runs it. */
export const PLAN_FILE = 'plan.yaml';

/** The state folder: where `run` keeps it by default, beside the plan. */
export const STATE_DIR = '.crm-ferry';

/** Files listed at most, and folder levels looked into: a folder is a project, not a disk. */
const MAX_FILES = 2000;
const MAX_DEPTH = 3;

const INPUT_KINDS: Record<string, InputKind> = {
  '.csv': 'csv',
  '.tsv': 'csv',
  '.txt': 'csv',
  '.xlsx': 'xlsx',
  '.xml': 'v1-export',
  '.json': 'v1-export',
};

/** Files crm-ferry writes beside the inputs, which are not inputs themselves. */
function isOwnOutput(name: string): boolean {
  return /(^|\.)(rejects|warnings)\.csv$/i.test(name) || /\.differences\.csv$/i.test(name);
}

/** A plan step's name from a file name: letters, digits, `-` and `_`, starting with a letter. */
export function stepNameFor(input: string): string {
  const stem = basename(input, extname(input))
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^[^A-Za-z]+/, '')
    .replace(/-+$/, '');
  return stem === '' ? 'rows' : stem;
}

/** Every lookup file a mapping names (`{lookup: {file: ...}}` anywhere in it), as written. */
export function lookupFilesOf(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) {
    for (const item of value) lookupFilesOf(item, out);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (
        key === 'lookup' &&
        inner !== null &&
        typeof inner === 'object' &&
        typeof (inner as { file?: unknown }).file === 'string'
      )
        out.push((inner as { file: string }).file);
      lookupFilesOf(inner, out);
    }
  }
  return out;
}

/** A name as the page shows it: relative to the folder, `/` between levels. */
export function shownName(dir: string, path: string): string {
  return relative(dir, path).split(sep).join('/');
}

export interface PlanStepFile {
  name: string;
  mapping: string;
  input: string;
}

/** The project folder. */
export class Project {
  constructor(
    /** Absolute, as the person gave it. */
    readonly dir: string,
  ) {}

  get planFile(): string {
    return join(this.dir, PLAN_FILE);
  }

  get stateDir(): string {
    return join(this.dir, STATE_DIR);
  }

  /** A name from the page, as a path inside the folder; `PATH_UNSAFE` when it leads out. */
  async inside(name: string, what: string): Promise<string> {
    return pathInside(this.dir, name, {
      what: `the page's ${what}`,
      hint: 'The workbench reads and writes only inside its project folder.',
    });
  }

  /**
   * The one path rule for what a mapping the workbench edits names: every lookup file (relative to
   * `baseFolder`, as the mapping's compiler reads it) is inside the folder, or `PATH_UNSAFE`.
   */
  async checkMappingFiles(mapping: unknown, baseFolder: string): Promise<void> {
    for (const file of lookupFilesOf(mapping)) {
      const name = relative(this.dir, resolve(baseFolder, file)).split(sep).join('/');
      await this.inside(name === '' ? file : name, `mapping's lookup file ${JSON.stringify(file)}`);
    }
  }

  /**
   * The same rule for the plan a check or a run reads: every step's input (a live v1 source
   * excepted: it is no path), its mapping, and the mapping's lookup files, each inside the folder.
   */
  async checkPlanFiles(): Promise<void> {
    for (const step of await this.planSteps()) {
      if (!isV1LiveInput(step.input)) await this.inside(step.input, `plan's input of step ${step.name}`);
      await this.checkMappingFileAt(await this.inside(step.mapping, `plan's mapping of step ${step.name}`));
    }
  }

  /** checkMappingFiles for a mapping file of the folder; its lookups are relative to its own folder, as a run reads them, unless `baseFolder` says otherwise. */
  async checkMappingFileAt(mappingPath: string, baseFolder = dirname(mappingPath)): Promise<void> {
    let text: string;
    try {
      text = await readFile(mappingPath, 'utf8');
    } catch {
      // A mapping that cannot be read is for the run itself to report, with its own words.
      return;
    }
    const doc = parseDocument(text);
    if (doc.errors.length === 0) await this.checkMappingFiles(doc.toJS(), baseFolder);
  }

  /** The plan's steps as written (names relative to the folder), or none without a plan. */
  async planSteps(): Promise<PlanStepFile[]> {
    const doc = await this.planDocument();
    if (doc === null) return [];
    const steps = doc.get('steps');
    if (!isSeq(steps)) return [];
    return steps.items.flatMap((item) => {
      if (!isMap(item)) return [];
      const name = item.get('name');
      const mapping = item.get('mapping');
      const input = item.get('input');
      return typeof name === 'string' && typeof mapping === 'string' && typeof input === 'string'
        ? [{ name, mapping, input }]
        : [];
    });
  }

  private async planDocument(): Promise<Document | null> {
    let text: string;
    try {
      text = await readFile(this.planFile, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    const doc = parseDocument(text);
    if (doc.errors.length > 0) {
      throw new FerryError(
        'PLAN_INVALID',
        `the plan is not valid YAML: ${doc.errors[0]?.message.split('\n')[0] ?? ''}`,
        {
          location: { file: this.planFile },
          hint: 'Fix it in an editor; the workbench adds steps to a plan it can read.',
        },
      );
    }
    return doc;
  }

  /**
   * Makes the plan read `input` with `mapping` in step `name`: the step of that input is updated,
   * or a step added; the rest of the plan, comments included, stays as it was.
   */
  async putStep(step: PlanStepFile): Promise<void> {
    const doc =
      (await this.planDocument()) ??
      parseDocument(
        '# The migration plan the workbench keeps: `crm-ferry run plan.yaml` runs it.\nversion: 1\nsteps: []\n',
      );
    let steps = doc.get('steps');
    if (!isSeq(steps)) {
      doc.set('steps', doc.createNode([]));
      steps = doc.get('steps');
    }
    if (!isSeq(steps)) throw new FerryError('INTERNAL', "the plan's steps could not be made a list");
    // A flow list written `steps: []` would keep the new steps on one line.
    (steps as { flow?: boolean }).flow = false;
    const existing = steps.items.find(
      (item) => isMap(item) && (item.get('input') === step.input || item.get('name') === step.name),
    );
    if (existing instanceof YAMLMap) {
      existing.set('name', step.name);
      existing.set('mapping', step.mapping);
      existing.set('input', step.input);
    } else {
      steps.add(doc.createNode({ name: step.name, mapping: step.mapping, input: step.input }));
    }
    await writeFileAtomic(this.planFile, doc.toString(), { mode: 0o644 });
  }

  /** The input files in the folder and the mapping files, with the plan's step of each input. */
  async files(): Promise<FilesView> {
    const steps = await this.planSteps();
    const inputs: InputFile[] = [];
    const mappings: string[] = [];
    const walk = async (folder: string, depth: number): Promise<void> => {
      let entries;
      try {
        entries = await readdir(folder, { withFileTypes: true });
      } catch {
        return;
      }
      entries.sort((a, b) => a.name.localeCompare(b.name));
      for (const entry of entries) {
        if (inputs.length + mappings.length >= MAX_FILES) return;
        if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
        const path = join(folder, entry.name);
        // Links are not followed: what is listed is what is inside the folder.
        if (entry.isDirectory()) {
          if (depth < MAX_DEPTH) await walk(path, depth + 1);
          continue;
        }
        if (!entry.isFile()) continue;
        const name = shownName(this.dir, path);
        const extension = extname(entry.name).toLowerCase();
        if (extension === '.yaml' || extension === '.yml') {
          if (name !== PLAN_FILE) mappings.push(name);
          continue;
        }
        const kind = INPUT_KINDS[extension];
        if (kind === undefined || isOwnOutput(entry.name)) continue;
        const info = await lstat(path);
        const step = steps.find((s) => s.input === name) ?? null;
        inputs.push({ name, kind, bytes: info.size, step: step?.name ?? null, mapping: step?.mapping ?? null });
      }
    };
    await walk(this.dir, 1);
    return { inputs, mappings };
  }

  /** Whether a file exists (a plain check; the caller resolved the name). */
  async exists(path: string): Promise<boolean> {
    return stat(path).then(
      () => true,
      () => false,
    );
  }

  /** The mapping file a new input's mapping is saved as: `contacts.csv` -> `contacts.mapping.yaml`, beside it. */
  mappingNameFor(input: string): string {
    const slash = input.lastIndexOf('/');
    const folder = slash === -1 ? '' : input.slice(0, slash + 1);
    return `${folder}${basename(input, extname(input))}.mapping.yaml`;
  }
}
